package org.axe4j.tvm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Shared fixtures: the repository's virtual environment, subprocesses, C++ test globals. */
final class TestSupport {
    private TestSupport() {}

    /** The repository root (surefire passes it; else the parent of the module directory). */
    static Path repoRoot() {
        String root = System.getProperty("axe4j.repo.root");
        return (root != null ? Paths.get(root) : Paths.get(System.getProperty("user.dir")).getParent())
                .toAbsolutePath().normalize();
    }

    /** The venv's python; fails (never skips) with a clear message when the venv is missing. */
    static Path venvPython() {
        Path python = repoRoot().resolve(".venv").resolve("bin").resolve("python");
        if (!Files.isExecutable(python)) {
            throw new AssertionError("the TVM virtual environment is missing: " + python
                    + " is not an executable; run `bash ci/setup-python.sh` in " + repoRoot());
        }
        return python;
    }

    static Path javaExecutable() {
        return Paths.get(System.getProperty("java.home"), "bin", "java");
    }

    /** Loads TVM plus {@code libtvm_ffi_testing.so}, which holds the C++ globals {@code testing.*}. */
    static void loadWithCppTestingGlobals() {
        Tvm.load();
        if (Tvm.findFunction("testing.echo").isEmpty()) {
            TvmLibraries.loadAdditional("libtvm_ffi_testing.so");
        }
    }

    record Result(int exitCode, String output) {}

    static Result run(List<String> command, Path workDir, long timeoutSeconds) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true);
        Path log = Files.createTempFile("axe4j-subprocess", ".log");
        builder.redirectOutput(log.toFile());
        Process process = builder.start();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("timed out after " + timeoutSeconds + " s: " + command + "\n"
                    + Files.readString(log, StandardCharsets.UTF_8));
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        Files.deleteIfExists(log);
        return new Result(process.exitValue(), output);
    }

    static List<String> javaCommand(String mainClass, String... args) {
        List<String> command = new ArrayList<>();
        command.add(javaExecutable().toString());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        return withArgs(command, mainClass, args);
    }

    static List<String> withArgs(List<String> command, String mainClass, String... args) {
        command.add(mainClass);
        command.addAll(List.of(args));
        return command;
    }
}

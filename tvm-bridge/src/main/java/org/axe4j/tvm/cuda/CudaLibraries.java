package org.axe4j.tvm.cuda;

import java.io.File;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Where the CUDA 13 runtime ({@code libcudart.so.13}) and cuBLAS ({@code libcublas.so.13}) are, in
 * this order: the folders of {@code -Daxe4j.cuda.libs} or {@code AXE4J_CUDA_LIBS} (a path list);
 * {@code LD_LIBRARY_PATH}; the {@code nvidia} wheels of Python environments
 * ({@code site-packages/nvidia/cu13/lib}, then {@code nvidia/<package>/lib}) in {@code AXE4J_VENV},
 * the nearest {@code .venv}, {@code /opt/<name>/.venv}, {@code /usr/lib/python3*},
 * {@code /usr/local/lib/python3*}; then {@code /usr/local/cuda}. The driver's {@code libcuda.so.1}
 * is never looked for here: it comes with the driver, through the system loader.
 */
public final class CudaLibraries {
    public static final String PROPERTY = "axe4j.cuda.libs";
    public static final String ENV = "AXE4J_CUDA_LIBS";

    private CudaLibraries() {}

    /** The candidate folders, most specific first, existing ones only. */
    public static List<Path> folders() {
        Set<Path> folders = new LinkedHashSet<>();
        String explicit = System.getProperty(PROPERTY);
        if (explicit == null || explicit.isBlank()) {
            explicit = System.getenv(ENV);
        }
        addPathList(folders, explicit);
        addPathList(folders, System.getenv("LD_LIBRARY_PATH"));
        List<Path> sitePackages = new ArrayList<>();
        String venv = System.getenv("AXE4J_VENV");
        if (venv != null && !venv.isBlank()) {
            sitePackages.addAll(glob(Paths.get(venv, "lib"), "python3*", "site-packages"));
        }
        for (Path dir = Paths.get(System.getProperty("user.dir")).toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve(".venv"))) {
                sitePackages.addAll(glob(dir.resolve(".venv").resolve("lib"), "python3*", "site-packages"));
                break;
            }
        }
        for (Path optVenv : glob(Paths.get("/opt"), "*", ".venv")) {
            sitePackages.addAll(glob(optVenv.resolve("lib"), "python3*", "site-packages"));
        }
        for (String root : List.of("/usr/lib", "/usr/local/lib")) {
            sitePackages.addAll(glob(Paths.get(root), "python3*", "site-packages"));
            sitePackages.addAll(glob(Paths.get(root), "python3*", "dist-packages"));
        }
        for (Path site : sitePackages) {
            folders.add(site.resolve("nvidia").resolve("cu13").resolve("lib"));
            folders.addAll(glob(site.resolve("nvidia"), "*", "lib"));
        }
        folders.add(Paths.get("/usr/local/cuda/lib64"));
        folders.add(Paths.get("/usr/local/cuda/targets/x86_64-linux/lib"));
        List<Path> existing = new ArrayList<>();
        for (Path folder : folders) {
            if (Files.isDirectory(folder)) {
                existing.add(folder.toAbsolutePath().normalize());
            }
        }
        return List.copyOf(new LinkedHashSet<>(existing));
    }

    /** The first {@code fileName} (e.g. {@code libcudart.so.13}) in {@link #folders()}. */
    public static Optional<Path> find(String fileName) {
        for (Path folder : folders()) {
            Path candidate = folder.resolve(fileName);
            if (Files.isRegularFile(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /**
     * {@link #find} or an exception that names the file, every folder searched and how to add one.
     */
    public static Path require(String fileName, String neededFor) {
        return find(fileName).orElseThrow(() -> new CudaException("cannot find " + fileName + " (needed for "
                + neededFor + "); looked in " + folders() + ". Name its folder with -D" + PROPERTY + "=<dir> or "
                + ENV + "=<dir>; pip's nvidia-cuda-runtime-cu13 / nvidia-cublas wheels and /usr/local/cuda hold it"));
    }

    private static void addPathList(Set<Path> folders, String list) {
        if (list == null) {
            return;
        }
        for (String part : list.split(File.pathSeparator)) {
            if (!part.isBlank()) {
                folders.add(Paths.get(part.trim()));
            }
        }
    }

    /** {@code base/<pattern>/<child>} for every match of {@code pattern}, sorted. */
    private static List<Path> glob(Path base, String pattern, String child) {
        List<Path> found = new ArrayList<>();
        if (!Files.isDirectory(base)) {
            return found;
        }
        try (DirectoryStream<Path> matches = Files.newDirectoryStream(base, pattern)) {
            for (Path match : matches) {
                if (Files.isDirectory(match.resolve(child))) {
                    found.add(match.resolve(child));
                }
            }
        } catch (IOException e) {
            return found;
        }
        found.sort(null);
        return found;
    }
}

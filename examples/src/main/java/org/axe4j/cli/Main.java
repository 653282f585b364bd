package org.axe4j.cli;

/** Entry point of the {@code axe} command-line tool. */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        System.out.println("axe4j");
    }
}

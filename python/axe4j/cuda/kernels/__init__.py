"""CUDA kernels written with Axe layouts and TIRx tile ops, compiled through ``axe4j.compile``."""

"""The old home of the kernels, kept for one release: CUDA kernels are in ``axe4j.cuda.kernels``, Trainium kernels
in ``axe4j.trn.kernels``, and ``axe4j.kernels.rules`` is ``axe4j.kernel_rules``; each old module here is a shim that
warns and aliases the new one."""

"""The product's CUDA kernels written for the new TIRx lane (``axe4j.tirx``'s tile ops, tvm_tirx's spellings); each
has its 0.27 twin in ``axe4j.cuda.kernels`` with the same layouts and schedule."""

"""Trainium (target kind ``trn``): the emitter of ``trn`` plans (``emit``), TVM's pipeline with axe4j's pass
(``pipeline``), the SBUF allocation check (``allocation``) and the Trainium kernels (``kernels``)."""

from . import emit  # noqa: F401  (the emitters register their plan kinds: axe4j._registry)

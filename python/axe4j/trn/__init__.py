"""Trainium (target kind ``trn``): the emitter of ``trn`` plans (``emit``), TVM's pipeline with axe4j's pass
(``pipeline``), the SBUF allocation check (``allocation``) and the Trainium kernels (``kernels``)."""

# The modules whose emitters register their plan kinds; axe4j._registry imports them the first time a plan of
# this target is emitted (importing the package alone stays light).
EMITTER_MODULES = ("emit",)

"""Trainium (target kind ``trn``): the emitter of ``trn`` plans (``emit``), TVM's pipeline with axe4j's pass
(``pipeline``), the SBUF allocation check (``allocation``) and the Trainium kernels (``kernels``)."""

"""The peers ``make bench-mesh`` measures axe4j's redistribution plans against: XLA's GSPMD (``gspmd``: a request
as a JAX program; ``hlo_bytes``: bytes each device receives in the compiled HLO) and DTensor's
one-mesh-dim-at-a-time order (``per_dim``)."""

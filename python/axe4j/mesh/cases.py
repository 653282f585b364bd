"""Seeded random redistribution requests over meshes of 2, 4, 2x2 and 2x4 ranks, plus one named case per kind."""

from __future__ import annotations

import random

MESHES = {2: [[2]], 4: [[4], [2, 2]], 8: [[2, 4]]}


def _tensor(rng: random.Random, mesh: list, shape: list, may_be_partial: bool) -> dict:
    split = [1] * len(shape)
    places, replicated = [], []
    for j, n in enumerate(mesh):
        pick = rng.randrange(4 if may_be_partial else 3)
        d = rng.randrange(len(shape))
        if pick in (1, 2) and shape[d] % (split[d] * n) == 0:
            split[d] *= n
            places.append(f"Shard({d})")
        elif pick == 3:
            places.append("Partial()")
        else:
            places.append("Replicate()")
            replicated.append(j)
    t = {"placements": "[" + ", ".join(places) + "]"}
    if rng.randrange(3) == 0:
        order = list(range(len(shape)))
        rng.shuffle(order)
        t["local_order"] = order
    if replicated and rng.randrange(4) == 0:
        j = rng.choice(replicated)
        t["held_at"] = [[j, rng.randrange(mesh[j])]]
    return t


def random_request(rng: random.Random, mesh: list, element_bytes: int = 8) -> dict:
    rank = rng.randint(1, 3)
    shape = [rng.choice([8, 16, 24]) if rank < 3 else rng.choice([4, 8]) for _ in range(rank)]
    req = {"mesh": {"shape": mesh}, "global_shape": shape, "element_bytes": element_bytes,
           "src": _tensor(rng, mesh, shape, True), "dst": _tensor(rng, mesh, shape, False)}
    if len(mesh) == 2 and rng.random() < 0.5:
        req["mesh"]["axes"] = ["dp", "tp"]
    return req


def named_requests(mesh: list, shape: list, element_bytes: int = 8) -> dict:
    """One request per redistribution kind the planner distinguishes (1-D mesh; 2-D adds mixed placements)."""
    def req(src, dst):
        return {"mesh": {"shape": mesh}, "global_shape": shape, "element_bytes": element_bytes,
                "src": src, "dst": dst}

    def pl(text, **extra):
        return {"placements": text, **extra}

    rep = "[" + ", ".join(["Replicate()"] * len(mesh)) + "]"
    if len(mesh) == 1:
        return {
            "shard->replicate": req(pl("[Shard(0)]"), pl(rep)),
            "replicate->shard": req(pl(rep), pl("[Shard(0)]")),
            "shard(0)->shard(1)": req(pl("[Shard(0)]"), pl("[Shard(1)]")),
            "partial->shard": req(pl("[Partial()]"), pl("[Shard(0)]")),
            "partial->replicate": req(pl("[Partial()]"), pl(rep)),
            "one rank->replicate": req(pl(rep, held_at=[[0, 0]]), pl(rep)),
        }
    return {
        "2d shard,shard->replicate": req(pl("[Shard(0), Shard(1)]"), pl(rep)),
        "2d mixed shard(0),replicate->replicate,shard(1)": req(pl("[Shard(0), Replicate()]"),
                                                                pl("[Replicate(), Shard(1)]")),
        "2d partial,shard(0)->shard(1),shard(0)": req(pl("[Partial(), Shard(0)]"), pl("[Shard(1), Shard(0)]")),
        "2d partial,partial->replicate": req(pl("[Partial(), Partial()]"), pl(rep)),
    }

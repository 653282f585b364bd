"""A numpy model of libaxe4j_nccl.so's semantics (native/nccl/axe4j_nccl.h): every rank's table read back and run
together, the gather packing zero for index -1, each collective from its definition, the scatter copies."""

import numpy as np

from axe4j.mesh import nccl_runtime as nr


def parse(table: np.ndarray) -> dict:
    """The table layout of native/nccl/axe4j_nccl.h, read back."""
    t = [int(x) for x in table]
    assert t[:2] == [nr.MAGIC, nr.TABLE_VERSION]
    rank, nranks, eb, src_size, dst_size, n_steps, n_copies = t[2:9]
    at = 9
    steps, copies = [], []

    def take(n):
        nonlocal at
        at += n
        return t[at - n:at]

    for _ in range(n_steps):
        kind, in_buf, count, out_size, root, gs, k, n_send = take(8)
        steps.append(dict(kind=kind, in_buf=in_buf, count=count, out_size=out_size, root=root, my_index=k,
                          group=take(gs), sc=take(gs), rc=take(gs), send=np.array(take(n_send), dtype=np.int64)))
    for _ in range(n_copies):
        frm, n = take(2)
        copies.append((frm, np.array(take(n), dtype=np.int64), np.array(take(n), dtype=np.int64)))
    assert at == len(t)
    return dict(rank=rank, nranks=nranks, src_size=src_size, dst_size=dst_size, steps=steps, copies=copies)


def simulate(tables: list, srcs: list) -> list:
    """Every rank's table run together, each collective from its definition (NCCL's semantics)."""
    parsed = [parse(t) for t in tables]
    bufs = [[s] for s in srcs]
    for i in range(len(parsed[0]["steps"])):
        sent = []
        for r, p in enumerate(parsed):
            st = p["steps"][i]
            src = bufs[r][st["in_buf"]]
            packed = np.where(st["send"] < 0, 0, src[np.maximum(st["send"], 0)]).astype(src.dtype)
            sent.append(packed)
        for r, p in enumerate(parsed):
            st = p["steps"][i]
            members = st["group"]
            assert all(parsed[m]["steps"][i]["group"] == members for m in members), "groups disagree"
            k, c = st["my_index"], st["count"]
            out = np.zeros(st["out_size"], dtype=srcs[r].dtype)
            if st["kind"] == nr.KINDS["reduce_scatter"]:
                out[:c] = sum(sent[m][k * c:(k + 1) * c] for m in members)
            elif st["kind"] == nr.KINDS["all_reduce"]:
                out[:c] = sum(sent[m] for m in members)
            elif st["kind"] == nr.KINDS["all_gather"]:
                out[:len(members) * c] = np.concatenate([sent[m] for m in members])
            elif st["kind"] == nr.KINDS["broadcast"]:
                out[:c] = sent[members[st["root"]]]
            elif st["kind"] == nr.KINDS["all_to_all"]:
                roff = 0
                for j, m in enumerate(members):
                    theirs = parsed[m]["steps"][i]
                    assert theirs["sc"][k] == st["rc"][j], "send and receive counts disagree"
                    soff = sum(theirs["sc"][:k])
                    out[roff:roff + st["rc"][j]] = sent[m][soff:soff + theirs["sc"][k]]
                    roff += st["rc"][j]
            bufs[r].append(out)
    dsts = []
    for r, p in enumerate(parsed):
        dst = np.zeros(p["dst_size"], dtype=srcs[r].dtype)
        for frm, at, to in p["copies"]:
            dst[to] = bufs[r][frm][at]
        dsts.append(dst)
    return dsts

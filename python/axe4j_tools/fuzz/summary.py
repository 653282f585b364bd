"""Counts of a fuzz run: per class, per target/op/dtype, per layout family, and the distinct failures."""

from __future__ import annotations

from collections import Counter, defaultdict

from . import known

CLASSES = ("right", "refused", "internal", "wrong", "hang")


class Summary:
    def __init__(self, open_names=()):
        self.open_names = list(open_names)
        self.total = 0
        self.seeds = set()
        self.by_class = Counter()
        self.by_key = defaultdict(Counter)        # (target, op, dtype) -> class counts
        self.by_family = defaultdict(Counter)
        self.failures = {}                        # signature -> [(program, outcome) first, count, known class]
        self.refusals = Counter()
        self.wrong_refusals = Counter()

    def add(self, p, outcome):
        self.total += 1
        self.seeds.add(p.seed)
        self.by_class[outcome.klass] += 1
        self.by_key[(p.target, p.op, f"{p.dtype}->{p.dst.dtype}" if p.op == "cast" else p.dtype)][outcome.klass] += 1
        for family in p.family().split("+"):   # a program counts under each family it uses
            self.by_family[family][outcome.klass] += 1
        if outcome.klass == "refused":
            self.refusals[outcome.signature] += 1
            name = known.wrong_refusal(p, outcome)
            if name:
                self.wrong_refusals[(name, outcome.signature)] += 1
        if outcome.klass in ("internal", "wrong", "hang"):
            entry = self.failures.setdefault(outcome.signature, [(p, outcome), 0, None])
            entry[1] += 1
            entry[2] = entry[2] or known.known_class(p, outcome, list(known.CLASSES))

    def distinct(self):
        """(signature, (program, outcome) of its first, count), most frequent first."""
        return [(s, e[0], e[1]) for s, e in sorted(self.failures.items(), key=lambda kv: -kv[1][1])]

    def unexplained(self):
        """Failures outside the open classes: [(signature, count)]."""
        return [(s, e[1]) for s, e in self.failures.items()
                if known.known_class(e[0][0], e[0][1], self.open_names) is None]

    def counts_line(self):
        return ", ".join(f"{c} {self.by_class[c]}" for c in CLASSES)

    def table(self, seconds=None, cpu_seconds=None):
        lines = [f"[fuzz] {self.total} programs: {self.counts_line()}"]
        if seconds:
            lines.append(f"[fuzz] {seconds:.0f} s, {self.total / seconds:.2f} programs/s, "
                         f"{1000 * seconds / max(self.total, 1):.0f} s per 1,000 programs")
        if cpu_seconds:
            lines.append(f"[fuzz] worker CPU time {cpu_seconds:.0f} s: {1000 * cpu_seconds / max(self.total, 1):.0f} "
                         "CPU s per 1,000 programs")
        lines.append("")
        lines.append(f"{'target':8} {'op':11} {'dtype':18} " + " ".join(f"{c:>8}" for c in CLASSES))
        for key in sorted(self.by_key):
            row = self.by_key[key]
            lines.append(f"{key[0]:8} {key[1]:11} {key[2]:18} " + " ".join(f"{row[c]:>8}" for c in CLASSES))
        lines.append("")
        lines.append(f"{'layout family (a program under each it uses)':48} " + " ".join(f"{c:>8}" for c in CLASSES))
        for fam in sorted(self.by_family):
            row = self.by_family[fam]
            lines.append(f"{fam:48} " + " ".join(f"{row[c]:>8}" for c in CLASSES))
        lines.append("")
        lines.append("distinct failures (count, known class, first seed/index, signature):")
        for signature, (p, _), count in self.distinct():
            cls = self.failures[signature][2] or "NEW"
            lines.append(f"  {count:6}  {cls:18} {p.seed}/{p.index:<6} {signature}")
        lines.append("refusals (count, reason):")
        for signature, count in self.refusals.most_common():
            lines.append(f"  {count:6}  {signature}")
        if self.wrong_refusals:
            lines.append("refusals of legal programs (count, known class, reason):")
            for (name, signature), count in self.wrong_refusals.most_common():
                lines.append(f"  {count:6}  {name:18} {signature}")
        return "\n".join(lines)

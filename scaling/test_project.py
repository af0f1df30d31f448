#!/usr/bin/python3
"""Unit tests of scaling/project.py (ctest -R scaling_project): sizes and closed
forms worked out by hand, the latency-bandwidth model's closed forms, the analytic
per-node bytes against the rank-by-rank simulation, the validation on a synthetic
study with a known hidden fraction, and the paper projection's shape. Standard
library, numpy; a second or so."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import project  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Sizes(unittest.TestCase):
    def test_gpt2_124m(self):
        # GPT-2 small: V 50257, T 1024, L 12, C 768 has 124,439,808 parameters.
        self.assertEqual(sum(project.gpt2_units(50257, 1024, 12, 768)), 124439808)

    def test_padding_and_packing(self):
        self.assertEqual(project.padded(10, 4), 12)
        self.assertEqual(project.padded(10, 4, 256), 1024)
        self.assertEqual(project.payload_bytes(4, 512), 256)
        # 512 int8 values, 2 scales: 512 + 8 = 520, rounded up to 528.
        self.assertEqual(project.packed_bytes(8, 512, 256), 528)
        # int4: 100 bytes -> 112, 4 scales -> 128.
        self.assertEqual(project.packed_bytes(4, 200, 50), 128)
        self.assertEqual(project.wire_bytes(4, 256, 128), 128 + 8)


class Traffic(unittest.TestCase):
    # Two units of 8 elements on 2 nodes x 2 ranks: slices of 2 bf16 = 4 bytes.
    units = [8, 8]

    def test_zero3_ring(self):
        t = project.step_traffic(self.units, 4, 2, "zero3")
        # forward u0, u1, u0 (tied head) and backward u1: 4 gathers x 3 hops x 4 bytes,
        # all from the boundary rank across, all from rank 0 inside.
        self.assertEqual(t.busiest("all_gather", 1), (48.0, 12.0))
        self.assertEqual(t.busiest("all_gather", 0), (48.0, 12.0))
        self.assertEqual(t.sent["all_gather"][0, 1], 0)
        self.assertEqual(t.busiest("reduce_scatter", 1), (24.0, 6.0))

    def test_hpz_second_use_inside_the_node(self):
        t = project.step_traffic(self.units, 4, 2, "hpz")
        # Only the first use of each unit crosses: 2 gathers x 3 hops x 4 bytes.
        self.assertEqual(t.busiest("all_gather", 1)[0], 24.0)
        # Rank 0: 24 bytes of world hops plus 2 in-node gathers of one 8-byte piece.
        self.assertEqual(t.busiest("all_gather", 0)[0], 24.0 + 16.0)

    def test_qgz_all_to_all(self):
        units = [1024]
        t = project.step_traffic(units, 4, 2, "qgz")
        # Across: each rank sends its node peer's owner one piece of 256 int4 + 2 scales.
        self.assertEqual(t.busiest("all_to_all", 1), (128.0 + 8.0, 1.0))
        # Inside: one chunk of 512 int4 + 4 scales to the other local rank.
        self.assertEqual(t.busiest("all_to_all", 0), (256.0 + 16.0, 1.0))
        self.assertEqual(t.busiest("reduce_scatter", 1), (0.0, 0.0))

    def test_analytic_equals_simulation(self):
        units = project.gpt2_units(256, 8, 2, 64)
        for X, Y in ((2, 2), (4, 2), (2, 3)):
            for v in project.VARIANTS:
                t = project.step_traffic(units, X * Y, X, v)
                inter, intra, _ = project.analytic_bytes(units, X, Y, v)
                node0 = sum(float(t.sent[k][:X, 1].sum()) for k in project.KINDS)
                gpu = max(float(sum(t.sent[k][r, 0] for k in project.KINDS)) for r in range(X * Y))
                self.assertEqual((inter, intra), (node0, gpu), f"{v} X={X} Y={Y}")


class Model(unittest.TestCase):
    def test_link_closed_form(self):
        # n messages of s bytes on one link: n * latency + n * s * 8 / bandwidth.
        t = project.Traffic(2, 1)
        for _ in range(5):
            t.send("all_gather", 0, 1, 1000)
        want = 5 * 10e-6 + 5 * 1000 * 8 / 1e9
        self.assertAlmostEqual(project.link_time(t, 1.0, 10.0), want, places=12)
        self.assertEqual(project.link_time(t, 0.0, 0.0), 0.0)
        # An intra-node link costs nothing unless given.
        t2 = project.Traffic(2, 2)
        t2.send("all_gather", 0, 1, 1000)
        self.assertEqual(project.link_time(t2, 1.0, 10.0), 0.0)
        self.assertAlmostEqual(project.link_time(t2, 1.0, 10.0, 2.0, 1.0), 1e-6 + 4e-6, places=12)

    def test_predict(self):
        link = {"all_gather": 2.0, "reduce_scatter": 0.4}
        self.assertAlmostEqual(project.predict(1.0, link, 0.25), 1.0 + 1.5 + 0.3)
        # The machine's own time wins where it is the larger: 1.5 vs 1.0, 0.3 vs 0.5.
        self.assertAlmostEqual(project.predict(1.0, link, 0.5, {"all_gather": 1.5, "reduce_scatter": 0.5}),
                               1.0 + 1.5 + 0.5)


class Validation(unittest.TestCase):
    def test_recovers_a_known_overlap(self):
        res = {"format": "zeropp-slowlink", "deck": "scaling/slowlink.toml", "latency_us": 5.0,
               "extra": ["--model.n_embd=64"], "runs": {}}
        model, zero = project.deck_model(res, ROOT)
        self.assertEqual(model["n_embd"], 64)
        # A machine that spends 3 ms in each kind whatever the link: the 100 Gbit/s link
        # (below 3 ms) hides under it, the slower ones do not.
        h, base = 0.3, {"zero3": 0.2, "zeropp": 0.25}
        machine = {k: 0.003 for k in project.KINDS}
        for v in base:
            for g in (0.1, 1.0, 10.0, 100.0):
                run = {"P": 4, "X": 2, "variant": v, "layout": [2, 2], "gbps": g}
                link = project.link_times(project.run_traffic(run, model, zero), g, 5.0)
                run["step_s"] = project.predict(base[v], link, h, machine)
                run["kinds"] = {k: {"time_s": max(machine[k], (1 - h) * link[k])} for k in project.KINDS}
                res["runs"][f"{v}-{g}"] = run
        fit, rms = project.fit_overlap(res, ROOT)
        self.assertAlmostEqual(fit, h, places=6)
        self.assertLess(rms, 1e-9)
        rows = project.validate(res, ROOT, h)
        self.assertEqual(len(rows), 6)  # 3 bandwidths below the reference, 2 variants
        self.assertTrue(all(abs(r[6]) < 1e-9 for r in rows))
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "results.json"), "w") as f:
                json.dump(res, f)
            self.assertEqual(len(project.load_study(d)["runs"]), 8)

    def test_links_kept_apart(self):
        # Runs without "links" are emulated; a study's real-link runs are validated alone.
        res = {"runs": {"a": {"gbps": 1.0}, "b": {"gbps": 1.0, "links": "real"},
                        "c": {"gbps": 2.0, "links": "emulated"}}}
        self.assertEqual(sorted(project.over_links(res, "emulated")["runs"]), ["a", "c"])
        self.assertEqual(sorted(project.over_links(res, "real")["runs"]), ["b"])
        with self.assertRaises(SystemExit):
            project.over_links({"runs": {"a": {}}}, "real")


class Paper(unittest.TestCase):
    def test_shape(self):
        rows = project.paper_table(50.0, 0.0, 5.0)
        for name in project.PAPER_MODELS:
            for tokens in (1024, 2048):
                r = [row[5] for row in rows if row[0] == name and row[2] == tokens]
                self.assertEqual(len(r), 4)
                # ZeRO++ gains more the slower the link, and always something.
                self.assertTrue(all(a > b > 1.0 for a, b in zip(r, r[1:])), r)
        # More tokens per GPU: more compute to amortise the same bytes.
        one = [row[5] for row in rows if row[2] == 1024]
        two = [row[5] for row in rows if row[2] == 2048]
        self.assertTrue(all(a > b for a, b in zip(one, two)))


if __name__ == "__main__":
    unittest.main(verbosity=1)

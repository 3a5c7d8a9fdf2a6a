"""Unit tests of userspace-tools/rainssd-status on status lines as the target
prints them (docs/rainssd.rst, "Status")."""
import io
import json
import os
import subprocess
import sys
import unittest

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "rainssd-status")

V11 = ("0 819200 rainssd 1.1.0 3 ADA 10 20 1 2 3 4 5 6 adaptive reconstruct 7 8 9 11 12 "
       "1:2:300:400:50:0:13:14:15:16 0:0:0:0:0:0:0:0:0:0 3:1:30:40:5:7:17:18:19:20")
V10 = "0 1024 rainssd 1.0.0 4 AAAA 1 2 3 4 5 6 7 8 count"
V12 = ("0 819200 rainssd 1.2.0 3 AAA 10 20 1 2 3 4 5 6 adaptive adaptive 7 8 9 11 12 480 "
       "1:2:300:400:50:0:13:14:15:16 0:0:0:0:0:0:0:0:0:0 3:1:30:40:5:7:17:18:19:20")
# 1.3.0: 1.2.0 plus, after the member words, stripe_cache_used stripe_cache
# stripe_cache_peak ops replans deferred_bios reserve_ops emergency_steps.
V13 = ("0 819200 rainssd 1.3.0 3 ADA 10 20 1 2 3 4 5 6 adaptive direct 7 8 9 11 12 480 "
       "1:2:300:400:50:0:13:14:15:16 0:0:0:0:0:0:0:0:0:0 3:1:30:40:5:7:17:18:19:20 "
       "12 256 40 1500 3 17 2 1")
# 1.4.0: 1.3.0 plus <sync_ratio> <sync_action> <read_errors> <repaired>;
# health letter a: being rebuilt.
V14 = ("0 819200 rainssd 1.4.0 3 AaD 10 20 1 2 3 4 5 6 adaptive direct 7 8 9 11 12 480 "
       "1:2:300:400:50:0:13:14:15:16 0:0:0:0:0:0:0:0:0:0 3:1:30:40:5:7:17:18:19:20 "
       "12 256 40 1500 3 17 2 1 1024/4096 recover 5:0:7 2:0:3")
# 1.5.0: 1.4.0 plus <mismatch_cnt>; sync_action may be check or repair.
V15 = V14.replace("1.4.0", "1.5.0").replace("AaD", "AAD").replace(
    "1024/4096 recover", "3072/4096 check") + " 24"
# 1.6.0: 1.5.0 with two more numbers in each member word: the others' load
# on the member's device (requests x 100, completions per second).
V16 = V15.replace("1.5.0", "1.6.0").replace(
    "1:2:300:400:50:0:13:14:15:16 0:0:0:0:0:0:0:0:0:0 3:1:30:40:5:7:17:18:19:20",
    "1:2:300:400:50:0:13:14:15:16:0:0 0:0:0:0:0:0:0:0:0:0:1625:3998 3:1:30:40:5:7:17:18:19:20:0:0")
# 1.7.0: 1.6.0 plus the RAID1 tier's <used>/<capacity> <to_r1> <to_r5> <offline>
# <writes> <reads> <migration_action> <metadata_mode> <needs_check>.
V17 = V16.replace("1.6.0", "1.7.0") + " 120/1365 140 20 7 900 450 migrate rw -"
# 1.7.0 on a volume without a tier
V17_NO_TIER = V16.replace("1.6.0", "1.7.0") + " 0/0 0 0 0 0 0 idle rw -"
# 1.11.0: 1.7.0 plus <joined_writes>.
V111 = V17.replace("1.7.0", "1.11.0") + " 4321"
TIER_COUNTERS = ["tier_to_r1", "tier_to_r5", "tier_offline", "tier_writes", "tier_reads"]
TAIL = ["stripe_cache_used", "stripe_cache", "stripe_cache_peak", "ops", "replans",
        "deferred_bios", "reserve_ops", "emergency_steps"]


def run(*args, stdin=None):
    r = subprocess.run([sys.executable, TOOL] + list(args), input=stdin, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return r.returncode, r.stdout, r.stderr


class StatusTool(unittest.TestCase):
    def test_v11_json_every_field(self):
        rc, out, err = run("--json", "--line", V11)
        self.assertEqual(rc, 0, err)
        s = json.loads(out)["segments"][0]
        self.assertEqual((s["start"], s["length"], s["version"], s["members"], s["health"]),
                         (0, 819200, "1.1.0", 3, "ADA"))
        self.assertEqual([s[k] for k in ("reads", "writes", "full_stripe_writes", "rmw", "rcw",
                                         "degraded_writes", "prereads", "reconstruct_reads")],
                         [10, 20, 1, 2, 3, 4, 5, 6])
        self.assertEqual((s["policy"], s["read_policy"]), ("adaptive", "reconstruct"))
        self.assertEqual([s[k] for k in ("rmw_adjusted", "rcw_adjusted", "cold_fallbacks",
                                         "policy_reconstructs", "probes")], [7, 8, 9, 11, 12])
        m = s["member"]
        self.assertEqual([x["state"] for x in m], ["alive", "dead", "alive"])
        self.assertEqual(m[0]["t_read_us"], 300)
        self.assertEqual(m[0]["t_write_us"], 400)
        self.assertEqual(m[2]["stall_ms"], 7)
        self.assertEqual((m[2]["prereads"], m[2]["reconstruct_reads"], m[2]["bypassed"],
                          m[2]["stalls"]), (17, 18, 19, 20))
        self.assertEqual(m[0]["reads_in_flight"] + m[0]["writes_in_flight"], 3)

    def test_v12_rebuild_us(self):
        rc, out, err = run("--json", "--line", V12)
        self.assertEqual(rc, 0, err)
        s = json.loads(out)["segments"][0]
        self.assertEqual((s["version"], s["probes"], s["rebuild_us"]), ("1.2.0", 12, 480))
        self.assertEqual([m["t_read_us"] for m in s["member"]], [300, 0, 30])
        self.assertNotIn("rebuild_us", json.loads(run("--json", "--line", V11)[1])["segments"][0])
        rc, out, _ = run("--line", V12)
        self.assertIn("rebuild_us", out)
        self.assertIn("480", out)

    def test_v13_cache_and_ops(self):
        rc, out, err = run("--json", "--line", V13)
        self.assertEqual(rc, 0, err)
        s = json.loads(out)["segments"][0]
        self.assertEqual((s["version"], s["health"], s["read_policy"], s["probes"],
                          s["rebuild_us"]), ("1.3.0", "ADA", "direct", 12, 480))
        self.assertEqual([s[k] for k in TAIL], [12, 256, 40, 1500, 3, 17, 2, 1])
        m = s["member"]
        self.assertEqual([x["state"] for x in m], ["alive", "dead", "alive"])
        self.assertEqual([x["t_read_us"] for x in m], [300, 0, 30])
        self.assertEqual(m[2]["stalls"], 20)
        rc, out, err = run("--line", V13)
        self.assertEqual(rc, 0, err)
        self.assertIn("stripe cache:", out)
        line = [l for l in out.splitlines() if "stripe cache:" in l][0]
        self.assertTrue(line.rstrip().endswith("12/256 (peak 40)"), line)
        counters = {l.split()[0]: l.split()[1] for l in out.splitlines()
                    if l.split() and l.split()[0] in TAIL}
        self.assertEqual(counters, {"ops": "1500", "replans": "3", "deferred_bios": "17",
                                    "reserve_ops": "2", "emergency_steps": "1"})

    def test_v14_sync_fields(self):
        rc, out, err = run("--json", "--line", V14)
        self.assertEqual(rc, 0, err)
        s = json.loads(out)["segments"][0]
        self.assertEqual((s["version"], s["health"], s["probes"], s["rebuild_us"]),
                         ("1.4.0", "AaD", 12, 480))
        self.assertEqual([s[k] for k in TAIL], [12, 256, 40, 1500, 3, 17, 2, 1])
        self.assertEqual((s["sync_ratio"], s["sync_done"], s["sync_total"], s["sync_action"]),
                         ("1024/4096", 1024, 4096, "recover"))
        self.assertEqual(s["read_errors"], [5, 0, 7])
        self.assertEqual(s["repaired"], [2, 0, 3])
        m = s["member"]
        self.assertEqual([x["state"] for x in m], ["alive", "rebuilding", "dead"])
        self.assertEqual([x["read_errors"] for x in m], [5, 0, 7])
        self.assertEqual([x["repaired"] for x in m], [2, 0, 3])
        self.assertEqual([x["t_read_us"] for x in m], [300, 0, 30])
        self.assertEqual(m[2]["stalls"], 20)

    def test_v14_labels(self):
        rc, out, err = run("--line", V14)
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertIn("  sync_action            recover", lines)
        ratio = [l for l in lines if l.split()[:1] == ["sync_ratio"]]
        self.assertEqual(len(ratio), 1, out)
        self.assertIn("1024/4096", ratio[0])
        self.assertTrue(ratio[0].rstrip().endswith("(25.0%)"), ratio[0])
        head = [l.split() for l in lines if l.split()[:2] == ["#", "state"]][0]
        self.assertEqual(head[-2:], ["rd_errs", "repaired"])
        rows = {l.split()[0]: l.split() for l in lines
                if l.split()[:1] in (["0"], ["1"], ["2"]) and len(l.split()) == len(head)}
        self.assertEqual(rows["1"][1], "rebuilding")
        self.assertEqual(rows["2"][1], "dead")
        self.assertEqual(rows["0"][-2:], ["5", "2"])
        self.assertEqual(rows["2"][-2:], ["7", "3"])
        # the 1.3.0 fields are still labelled, and a 1.3.0 line has no sync fields
        self.assertTrue([l for l in lines if l.rstrip().endswith("12/256 (peak 40)")])
        rc, out, _ = run("--line", V13)
        self.assertNotIn("sync_action", out)
        self.assertNotIn("rd_errs", out)

    def test_v14_idle_and_frozen(self):
        for action, ratio, pct in (("idle", "4096/4096", "(100.0%)"), ("frozen", "0/4096", "(0.0%)"),
                                   ("resync", "2048/4096", "(50.0%)")):
            line = V14.replace("1024/4096 recover", ratio + " " + action).replace("AaD", "AAA")
            rc, out, err = run("--json", "--line", line)
            self.assertEqual(rc, 0, err)
            s = json.loads(out)["segments"][0]
            self.assertEqual((s["sync_action"], s["sync_ratio"]), (action, ratio))
            self.assertEqual([x["state"] for x in s["member"]], ["alive"] * 3)
            rc, out, err = run("--line", line)
            self.assertIn(pct, out)

    def test_v15_mismatch_cnt(self):
        rc, out, err = run("--json", "--line", V15)
        self.assertEqual(rc, 0, err)
        s = json.loads(out)["segments"][0]
        self.assertEqual((s["version"], s["sync_action"], s["sync_ratio"], s["mismatch_cnt"]),
                         ("1.5.0", "check", "3072/4096", 24))
        self.assertEqual(s["read_errors"], [5, 0, 7])
        rc, out, err = run("--line", V15.replace(" check ", " repair "))
        self.assertEqual(rc, 0, err)
        self.assertIn("  mismatch_cnt           24", out.splitlines())
        self.assertIn("  sync_action            repair", out.splitlines())
        # a 1.4.0 line has none
        rc, out, _ = run("--json", "--line", V14)
        self.assertNotIn("mismatch_cnt", json.loads(out)["segments"][0])

    def test_v16_foreign_load(self):
        rc, out, err = run("--json", "--line", V16)
        self.assertEqual(rc, 0, err)
        s = json.loads(out)["segments"][0]
        self.assertEqual((s["version"], s["mismatch_cnt"]), ("1.6.0", 24))
        m = s["member"]
        self.assertEqual([(x["foreign_x100"], x["foreign_per_s"]) for x in m],
                         [(0, 0), (1625, 3998), (0, 0)])
        self.assertEqual((m[2]["stalls"], m[2]["t_read_us"]), (20, 30))
        rc, out, err = run("--line", V16)
        self.assertEqual(rc, 0, err)
        self.assertIn("foreign", out)
        self.assertIn("16.25", out)
        # a 1.5.0 line has no such column; a word of 11 numbers is refused
        rc, out, _ = run("--line", V15)
        self.assertNotIn("foreign", out)
        rc, _, err = run("--line", V16.replace(":1625:3998", ":1625"))
        self.assertNotEqual(rc, 0)

    def test_v17_tier_json(self):
        rc, out, err = run("--json", "--line", V17)
        self.assertEqual(rc, 0, err)
        s = json.loads(out)["segments"][0]
        self.assertEqual((s["version"], s["health"], s["probes"], s["rebuild_us"],
                          s["sync_ratio"], s["mismatch_cnt"]),
                         ("1.7.0", "AAD", 12, 480, "3072/4096", 24))
        self.assertEqual([s[k] for k in TAIL], [12, 256, 40, 1500, 3, 17, 2, 1])
        self.assertEqual((s["tier_used"], s["tier_capacity"]), (120, 1365))
        self.assertEqual([s[k] for k in TIER_COUNTERS], [140, 20, 7, 900, 450])
        self.assertEqual((s["migration_action"], s["metadata_mode"], s["needs_check"]),
                         ("migrate", "rw", False))
        m = s["member"]
        self.assertEqual([(x["foreign_x100"], x["foreign_per_s"]) for x in m],
                         [(0, 0), (1625, 3998), (0, 0)])
        self.assertEqual([x["read_errors"] for x in m], [5, 0, 7])
        # the other actions and modes, and needs_check
        for action in ("idle", "flush", "frozen"):
            for mode, check in (("ro", "needs_check"), ("fail", "-")):
                line = V17.replace("migrate rw -", "%s %s %s" % (action, mode, check))
                rc, out, err = run("--json", "--line", line)
                self.assertEqual(rc, 0, err)
                s = json.loads(out)["segments"][0]
                self.assertEqual((s["migration_action"], s["metadata_mode"], s["needs_check"]),
                                 (action, mode, check == "needs_check"))
        # a full tier is fine
        rc, out, err = run("--json", "--line", V17.replace("120/1365", "1365/1365"))
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["segments"][0]["tier_used"], 1365)
        # a 1.6.0 line has no tier fields
        rc, out, _ = run("--json", "--line", V16)
        s = json.loads(out)["segments"][0]
        for k in ["tier_used", "tier_capacity", "migration_action", "metadata_mode",
                  "needs_check"] + TIER_COUNTERS:
            self.assertNotIn(k, s)

    def test_v111_joined_writes(self):
        rc, out, err = run("--json", "--line", V111)
        self.assertEqual(rc, 0, err)
        s = json.loads(out)["segments"][0]
        self.assertEqual((s["version"], s["joined_writes"], s["tier_used"], s["needs_check"]),
                         ("1.11.0", 4321, 120, False))
        self.assertEqual([s[k] for k in TAIL], [12, 256, 40, 1500, 3, 17, 2, 1])
        self.assertEqual([s[k] for k in TIER_COUNTERS], [140, 20, 7, 900, 450])
        self.assertNotIn("joined_writes", json.loads(run("--json", "--line", V17)[1])[
            "segments"][0])
        rc, out, err = run("--line", V111)
        self.assertEqual(rc, 0, err)
        self.assertIn("  joined_writes          4321", out.splitlines())
        # not a number, or a word too many: refused
        rc, _, err = run("--line", V111.replace(" 4321", " x"))
        self.assertEqual(rc, 1)
        self.assertIn("joined_writes", err)
        rc, _, err = run("--line", V111 + " 5")
        self.assertEqual(rc, 1)

    def test_v17_tier_labels(self):
        rc, out, err = run("--line", V17)
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        tier = [l for l in lines if l.split()[:1] == ["tier"]]
        self.assertEqual(len(tier), 1, out)
        self.assertIn("120/1365", tier[0])
        fields = {l.split()[0]: l.split()[1] for l in lines if len(l.split()) == 2}
        self.assertEqual([fields.get(k) for k in TIER_COUNTERS], ["140", "20", "7", "900", "450"])
        self.assertEqual((fields.get("migration_action"), fields.get("metadata_mode"),
                          fields.get("needs_check")), ("migrate", "rw", "no"))
        self.assertIn("  mismatch_cnt           24", lines)
        self.assertIn("16.25", out)
        rc, out, err = run("--line", V17.replace("migrate rw -", "flush ro needs_check"))
        self.assertEqual(rc, 0, err)
        self.assertIn("  migration_action       flush", out.splitlines())
        self.assertIn("  metadata_mode          ro", out.splitlines())
        self.assertIn("  needs_check            yes", out.splitlines())
        # a 1.6.0 line has none of them
        rc, out, _ = run("--line", V16)
        for k in ["tier", "migration_action", "metadata_mode", "needs_check"] + TIER_COUNTERS:
            self.assertNotIn(k, [l.split()[0] for l in out.splitlines() if l.split()])

    def test_v17_no_tier(self):
        rc, out, err = run("--json", "--line", V17_NO_TIER)
        self.assertEqual(rc, 0, err)
        s = json.loads(out)["segments"][0]
        self.assertEqual((s["tier_used"], s["tier_capacity"], s["migration_action"],
                          s["metadata_mode"], s["needs_check"]), (0, 0, "idle", "rw", False))
        self.assertEqual([s[k] for k in TIER_COUNTERS], [0] * 5)
        rc, out, err = run("--line", V17_NO_TIER)
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertIn("  tier                   none", lines)
        self.assertIn("  metadata_mode          rw", lines)
        for k in ["migration_action", "needs_check"] + TIER_COUNTERS:
            self.assertNotIn(k, out)

    def test_v12_has_no_cache_fields(self):
        rc, out, err = run("--json", "--line", V12)
        self.assertEqual(rc, 0, err)
        s = json.loads(out)["segments"][0]
        for k in TAIL:
            self.assertNotIn(k, s)
        self.assertEqual(len(s["member"]), 3)
        rc, out, _ = run("--line", V12)
        self.assertEqual(rc, 0)
        self.assertNotIn("stripe cache", out)
        self.assertNotIn("emergency_steps", out)

    def test_v10_line_and_stdin(self):
        rc, out, err = run("--json", "--line", "-", stdin=V10 + "\n")
        self.assertEqual(rc, 0, err)
        s = json.loads(out)["segments"][0]
        self.assertEqual((s["policy"], s["reconstruct_reads"]), ("count", 8))
        self.assertNotIn("member", s)

    def test_table_output(self):
        rc, out, _ = run("--line", V11)
        self.assertEqual(rc, 0)
        self.assertIn("policy adaptive, read_policy reconstruct", out)
        rows = [l.split() for l in out.splitlines() if l.split()[:2] in (["0", "alive"],
                                                                         ["1", "dead"])]
        self.assertEqual(len(rows), 2)
        self.assertEqual(rows[0][4:6], ["300", "400"])

    def test_two_segments(self):
        rc, out, _ = run("--json", "--line", V10 + "\n" + V10.replace("0 1024", "1024 2048", 1))
        self.assertEqual(rc, 0)
        self.assertEqual([s["start"] for s in json.loads(out)["segments"]], [0, 1024])

    def test_malformed(self):
        bad = [
            "0 1024 linear 8:0 0",                                  # another target
            V11.replace("ADA", "AD"),                               # health vs #devs
            V11.replace("ADA", "AXA"),                              # unknown state
            V11.replace(" 3:1:30:40:5:7:17:18:19:20", ""),           # a member word missing
            V11.replace("1:2:300:400", "1:2:300"),                  # short member word
            V11.replace(" 10 20 ", " ten 20 "),                     # not a number
            V12.replace(" 0:0:0:0:0:0:0:0:0:0", ""),                 # 1.2.0, a member word missing
            V12.replace(" 480 ", " 480 481 "),                      # one word too many
            V12.replace(" 480 ", " x "),                            # rebuild_us not a number
            V13.rsplit(" ", 1)[0],                                  # 1.3.0, a tail word missing
            V13 + " 9",                                             # 1.3.0, one word too many
            V13.replace(" 256 40 ", " 256 x "),                      # stripe_cache_peak not a number
            V13.replace(" 0:0:0:0:0:0:0:0:0:0", ""),                 # 1.3.0, a member word missing
            V13 + " 1024/4096 recover 5:0:7",                       # 1.4.0, a sync word missing
            V15 + " 9",                                             # 1.5.0, one word too many
            V15.rsplit(" ", 1)[0] + " x",                           # mismatch_cnt not a number
            V14.replace("1024/4096", "1024"),                       # sync_ratio without /
            V14.replace("1024/4096", "1024/x"),                     # sync_ratio not a number
            V14.replace(" recover ", " 12 "),                       # sync_action not an action
            V14.replace(" recover ", " rebuilding "),               # unknown sync_action
            V14.replace(" 5:0:7 ", " 5:0 "),                        # read_errors of 2 members
            V14.replace(" 2:0:3", " 2:0:3:4"),                      # repaired of 4 members
            V14.replace(" 5:0:7 ", " 5:x:7 "),                      # read_errors not a number
            V14.replace("AaD", "AbD"),                              # unknown health letter
            V17 + " 9",                                             # 1.7.0, one word too many
            V17.rsplit(" ", 1)[0],                                  # 1.7.0, a tier word missing
            V17.replace("120/1365", "120"),                         # tier_stripes without /
            V17.replace("120/1365", "120/x"),                       # tier_stripes not a number
            V17.replace("120/1365", "1366/1365"),                   # more used than capacity
            V17_NO_TIER.replace(" 0/0 ", " 1/0 "),                  # used in no tier
            V17.replace(" 140 20 ", " 140 x "),                     # tier_to_r5 not a number
            V17.replace(" migrate ", " resync "),                   # unknown migration_action
            V17.replace(" migrate ", " 3 "),                        # migration_action a number
            V17.replace(" rw ", " wr "),                            # unknown metadata_mode
            V17.replace(" rw -", " rw needs-check"),                # bad needs_check
            "",
        ]
        for line in bad:
            rc, out, err = run("--line", line)
            self.assertEqual(rc, 1, line)
            self.assertTrue(err.startswith("rainssd-status: "), err)
            self.assertEqual(out, "")

    def test_usage(self):
        self.assertEqual(run()[0], 2)
        self.assertEqual(run("dev", "--line", V10)[0], 2)
        self.assertEqual(run("--frobnicate")[0], 2)

    def test_missing_device(self):
        rc, _, err = run("rainssd-status-no-such-device")
        self.assertEqual(rc, 1)
        self.assertIn("rainssd-status:", err)


if __name__ == "__main__":
    unittest.main()

"""Unit tests of tools/mutate's mutant generation (no build): every operator fires where it
should and nowhere else, ids are stable, and the variant-only rule tags exactly the code that
runs only under a historical bug."""

import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "mutate"))

import markdown  # noqa: E402
import mutation_operators  # noqa: E402
import source_scan  # noqa: E402

snippet = """#include "core/x.h"
// if (a < b) in a comment is not code
namespace kvsim::core {

void ledger::release(room_key key) {
  if (count < limit && !closed_) {
    pages_.erase(key);  // the call that matters
  }
  KVSIM_INVARIANT(count <= limit, "count < limit");
  log("a < b && c");
  total_ = std::min(total_ + 1, limit);
  ++count_;
}

bool ledger::is_open(room_key key) const {
  const auto it = rooms_.find(key);
  return it != rooms_.end() && it->second.open;
}

status<ledger_error> ledger::close(room_key key) {
  if (variant_.has(bug::b1_destination_reuse) && ready_) {
    free_now(key, 0);
  } else {
    defer(key, first, second);
  }
  while (pending_ > 0) drain();
  return done{};
}

}  // namespace kvsim::core
"""


def mutants(text=snippet, skip=None):
    return mutation_operators.generate("core/x.cc", text, skip)


def described(ms):
    return {(m.operator, m.after) for m in ms}


class code_view_test(unittest.TestCase):
    def test_comments_strings_and_directives_are_blank(self):
        code = source_scan.code_view(snippet)
        self.assertEqual(len(code), len(snippet))
        self.assertNotIn("include", code)
        self.assertNotIn("in a comment", code)
        self.assertNotIn("a < b && c", code)
        self.assertIn("if (count < limit && !closed_)", code)

    def test_functions_and_their_return_types(self):
        found = {(f.name, f.return_type) for f in source_scan.functions(source_scan.code_view(snippet))}
        self.assertEqual(found, {("ledger::release", "void"), ("ledger::is_open", "bool"),
                                 ("ledger::close", "status<ledger_error>")})


class operators_test(unittest.TestCase):
    def test_every_operator_family_fires(self):
        ops = {m.operator for m in mutants()}
        for op in ("ror", "lcr", "negation", "cond_true", "cond_false", "cond_negate", "aor", "inc",
                   "literal", "min_max", "stmt_delete", "early_return", "swap_args"):
            self.assertIn(op, ops)

    def test_concrete_mutants(self):
        got = described(mutants())
        expected = {
            ("ror", "if (count <= limit && !closed_) {"),
            ("lcr", "if (count < limit || !closed_) {"),
            ("negation", "if (count < limit && closed_) {"),
            ("cond_true", "if (true) {"),
            ("cond_false", "while (false) drain();"),
            ("cond_negate", "if (!(count < limit && !closed_)) {"),
            ("aor", "total_ = std::min(total_ - 1, limit);"),
            ("literal", "total_ = std::min(total_ + 0, limit);"),
            ("min_max", "total_ = std::max(total_ + 1, limit);"),
            ("inc", "--count_;"),
            ("stmt_delete", "// the call that matters"),
            ("stmt_delete", "(line removed)"),
            ("early_return", "void ledger::release(room_key key) { return;"),
            ("early_return", "bool ledger::is_open(room_key key) const { return false;"),
            ("early_return", "status<ledger_error> ledger::close(room_key key) { return done{};"),
            ("swap_args", "defer(key, second, first);"),
        }
        self.assertLessEqual(expected, got, expected - got)

    def test_nothing_in_comments_strings_assertions_or_declarations(self):
        for m in mutants():
            self.assertNotIn("KVSIM_INVARIANT", m.before, m.diff())
            literal_at = snippet.index('"a < b && c"')
            self.assertFalse(literal_at <= m.start < literal_at + 12, m.diff())
            self.assertGreater(m.line, 4, m.diff())  # not the include or the comment
        deleted = [m.before for m in mutants() if m.operator == "stmt_delete"]
        self.assertNotIn("const auto it = rooms_.find(key);", deleted)
        self.assertNotIn("return done{};", deleted)
        self.assertNotIn("return it != rooms_.end() && it->second.open;", deleted)

    def test_every_mutant_changes_the_text(self):
        for m in mutants():
            self.assertNotEqual(m.apply(snippet), snippet, m.diff())

    def test_ids_are_unique_and_survive_a_line_shift(self):
        before = {m.id: m.diff() for m in mutants()}
        self.assertEqual(len(before), len(mutants()))
        shifted = snippet.replace("namespace kvsim::core {", "namespace kvsim::core {\n// a new line\n")
        after = {m.id: m.diff() for m in mutants(shifted)}
        self.assertEqual(before, after)

    def test_skipped_functions_are_not_mutated(self):
        kept = {m.line for m in mutants(skip={"ledger::release"})}
        self.assertFalse(any(5 <= line <= 13 for line in kept))


class variant_only_test(unittest.TestCase):
    def tags(self):
        return {(m.operator, m.after): m.variant_only for m in mutants()}

    def test_body_and_other_conjuncts_are_variant_only(self):
        tags = self.tags()
        self.assertEqual(tags[("stmt_delete", "(line removed)")], None)  # pages_.erase: live
        free_now = [m for m in mutants() if "free_now" in m.before]
        self.assertTrue(free_now)
        for m in free_now:
            self.assertEqual(m.variant_only, "b1_destination_reuse", m.diff())

    def test_condition_mutants_that_can_turn_the_branch_on_stay_live(self):
        close_if = [m for m in mutants() if "variant_.has" in m.before]
        by_op = {}
        for m in close_if:
            by_op.setdefault(m.operator, set()).add(m.variant_only)
        self.assertEqual(by_op["cond_false"], {"b1_destination_reuse"})
        self.assertEqual(by_op["cond_true"], {None})
        self.assertEqual(by_op["cond_negate"], {None})
        self.assertEqual(by_op["lcr"], {None})

    def test_a_variant_held_by_a_member_is_recognised(self):
        text = """namespace kvsim::core {
ledger_options options_of(const rank_options& options) {
  ledger_options ledger;
  if (options.v.has(bug::b3_source_reuse)) ledger.release = release_policy::free_while_leased;
  ledger.order = options.order;
  return ledger;
}
}  // namespace kvsim::core
"""
        for m in mutants(text):
            if "free_while_leased" in m.before and m.operator in ("stmt_delete", "cond_false"):
                self.assertEqual(m.variant_only, "b3_source_reuse", m.diff())
            if "ledger.order" in m.before:
                self.assertIsNone(m.variant_only, m.diff())

    def test_else_branch_stays_live(self):
        for m in mutants():
            if "defer(" in m.before:
                self.assertIsNone(m.variant_only, m.diff())


class core_sources_test(unittest.TestCase):
    """The generator on the real core: every file yields mutants, and none is a no-op."""

    def test_core_files(self):
        core = pathlib.Path(__file__).resolve().parents[2] / "core"
        for name in ("page_ledger.cc", "prefill_sender.cc", "decode_receiver.cc", "room_lifetimes.cc",
                     "prefetch_abort.cc", "abort_token.cc", "transfer_status_table.cc"):
            text = (core / name).read_text()
            ms = mutation_operators.generate(f"core/{name}", text)
            self.assertGreater(len(ms), 20, name)
            for m in ms:
                self.assertNotEqual(m.apply(text), text, m.diff())


class markdown_test(unittest.TestCase):
    """docs/mutation.md is rendered from a report: every survivor needs its reason."""

    def report(self):
        row = {"id": "M1", "file": "core/x.cc", "line": 3, "function": "f", "operator": "ror",
               "diff": "a < b  =>  a <= b", "status": "survived", "scenario": None, "strategy": None,
               "invariant": None, "seconds": 1.0, "unit_tests": "killed", "note": None}
        killed = dict(row, id="M2", status="killed", scenario="page42", strategy="random", invariant="I1")
        return {"total": 2, "killed": 1, "survived": 1, "timed_out": 0, "build_error": 0, "equivalent": 0,
                "score": 0.5, "unit_score": 1.0, "survived_search_killed_by_unit": 1,
                "budget": {"runs": 10, "strategies": ["random"], "scenarios": ["page42"],
                           "clean_search_seconds": 1.0, "timeout_seconds": 35.0, "wall_seconds": 60},
                "mutants": [row, killed]}

    def test_a_survivor_without_a_note_is_refused(self):
        with self.assertRaises(SystemExit):
            markdown.render(self.report(), {}, "cmd")

    def test_survivors_are_listed_with_their_reason(self):
        text = markdown.render(self.report(), {"core/x.cc:f": "nothing reads it"}, "cmd")
        self.assertIn("**Search score: 50.0%**", text)
        self.assertIn("nothing reads it", text)
        self.assertIn("`M1` line 3, ror [a unit test kills it]", text)
        self.assertNotIn("`M2`", text.split("## Survivors")[1])

    def test_hand_written_sections_follow_the_summary_in_order(self):
        text = markdown.render(self.report(), {"core/x.cc:f": "nothing reads it"}, "cmd",
                               sections=["## Planted\n\nrows\n", "## History\n"])
        self.assertLess(text.index("**Search score"), text.index("## Planted"))
        self.assertLess(text.index("## Planted"), text.index("## History"))
        self.assertLess(text.index("## History"), text.index("## By file"))


if __name__ == "__main__":
    unittest.main()

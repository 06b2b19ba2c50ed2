"""tools/check_lengths.py: it measures what a reader would call a function (lambdas count towards
their function, braces in comments and strings do not), fires on a long function and a long
file, honours an exception with a reason, and refuses a stale one."""

import contextlib
import io
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
import check_lengths  # noqa: E402


def body(lines):
    return "\n".join(f"  x += {i};" for i in range(lines))


source = f"""// a comment with braces {{ }} and a string below
namespace kvsim {{
struct thing {{
  int short_one() const {{ return 1; }}
}};

int long_one(int x) {{
  const auto f = [&](int y) {{
    return y + 1;
  }};
{body(6)}
  const char* s = "}} {{ ;";
  return f(x);
}}

thing::thing(int a) : a_(a) {{
  if (a) {{
    a_ = 2;
  }}
}}

TEST(Suite, Case) {{
{body(3)}
}}
}}  // namespace kvsim
"""


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = check_lengths.main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


class measure_test(unittest.TestCase):
    def test_functions_and_their_lengths(self):
        found = {name: (length, start) for length, start, name in check_lengths.functions(source)}
        self.assertEqual(found["short_one"], (1, 4))
        self.assertEqual(found["long_one"], (13, 7))  # the lambda's lines count towards it
        self.assertEqual(found["thing::thing"], (5, 21))
        self.assertEqual(found["Suite.Case"], (5, 27))
        self.assertNotIn("thing", found)  # a struct is not a function


class check_test(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.dir.name)
        (self.root / "src").mkdir()
        (self.root / "src" / "x.cc").write_text(source)
        self.exceptions = self.root / "exceptions.txt"
        self.exceptions.write_text("")

    def tearDown(self):
        self.dir.cleanup()

    def check(self, *extra):
        return run("--exceptions", self.exceptions, *extra, self.root / "src")

    def test_clean_under_the_limits(self):
        code, out, _ = self.check("--function-max", "13", "--file-max", "100")
        self.assertEqual(code, 0, out)

    def test_fires_on_a_long_function_and_a_long_file(self):
        code, out, err = self.check("--function-max", "12", "--file-max", "30")
        self.assertEqual(code, 1)
        self.assertIn("x.cc:7: long_one is 13 lines (at most 12)", out)
        self.assertIn("x.cc:1: 32 lines (at most 30)", out)
        self.assertIn("2 finding(s)", err)

    def test_an_exception_with_a_reason_is_honoured(self):
        shown = (self.root / "src" / "x.cc").resolve()
        self.exceptions.write_text(f"function {shown}:long_one  a table of cases, one per line\n")
        code, out, _ = self.check("--function-max", "12", "--file-max", "100")
        self.assertEqual(code, 0, out)

    def test_an_exception_without_a_reason_is_refused(self):
        self.exceptions.write_text("function src/x.cc:long_one\n")
        code, _, err = self.check()
        self.assertEqual(code, 2)
        self.assertIn("expected 'function FILE:NAME  reason'", err)

    def test_a_stale_exception_is_refused_on_a_whole_tree_check(self):
        self.exceptions.write_text("function core/gone.cc:gone  it was long once\n")
        code, _, err = run("--exceptions", self.exceptions)
        self.assertEqual(code, 2)
        self.assertIn("matches nothing any more", err)

    def test_a_missing_directory_is_misuse(self):
        code, _, err = run("--exceptions", self.exceptions, self.root / "nowhere")
        self.assertEqual(code, 2)
        self.assertIn("no such directory", err)


if __name__ == "__main__":
    unittest.main()

"""Changed lines placed in the definitions they are in, by a parser (prsum.syntax, prsum.digest).

Each case is one the line rule (a changed line belongs to the nearest definition above it, or
one defined on the lines around it) gets wrong, in Python, Rust, Go, TypeScript and Java: a
decorator changed, a line between two functions, a nested definition, a member of a class or
impl block, a function renamed, a function deleted.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from prsum import prompts
from prsum.cards.assembly import focus_places
from prsum.cards.packing import Packer, Usage
from prsum.digest import FileDigest, digest_file, with_definitions
from prsum.facts import compute_facts
from prsum.grounding import Evidence
from prsum.history import History
from prsum.llm import GREEDY
from prsum.syntax import language_of, outline
from prsum.types import Card, FileChange, FileDiff
from tests.conftest import RepoBuilder
from tests.fakes import FakeBackend
from tests.pipeline import cards_for


@dataclass(frozen=True)
class Case:
    """One file before and after, and what its digest must say."""

    name: str
    before: str
    after: str
    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()
    qualified: tuple[str, ...] = field(default=())  # the changes' qualified names, in order


PYTHON = [
    Case(
        "decorator",
        "def a():\n    return 1\n\n\n@jit(\n    pass_configs={\n        'opt_level': 1,\n"
        "    }\n)\ndef b():\n    return 2\n",
        "def a():\n    return 1\n\n\n@jit(\n    pass_configs={\n        'opt_level': 2,\n"
        "    }\n)\ndef b():\n    return 2\n",
        changed=("b",),
    ),
    Case(
        "between",
        "def a():\n    return 1\n\n\nRETRIES = 3\n\n\ndef b():\n    return 2\n",
        "def a():\n    return 1\n\n\nRETRIES = 4\n\n\ndef b():\n    return 2\n",
    ),
    Case(
        "nested",
        "def outer():\n    def inner():\n        return 1\n\n    total = inner()\n    return total\n",
        "def outer():\n    def inner():\n        return 1\n\n    total = inner() + 1\n"
        "    return total\n",
        changed=("outer",),
    ),
    Case(
        "member",
        "class Client:\n    def connect(self):\n        return 1\n\n    timeout = 5\n\n"
        "    def close(self):\n        return 2\n",
        "class Client:\n    def connect(self):\n        return 1\n\n    timeout = 6\n\n"
        "    def close(self):\n        return 2\n",
        changed=("Client",),
    ),
    Case(
        "renamed",
        "class Loader:\n    def load_config(self, path):\n        with open(path) as handle:\n"
        "            text = handle.read()\n        return text.strip()\n",
        "class Loader:\n    def read_config(self, path):\n        with open(path) as handle:\n"
        "            text = handle.read()\n        return text.strip()\n",
        renamed=(("load_config", "read_config"),),
        qualified=("Loader.read_config",),
    ),
    Case(
        "deleted",
        "def keep():\n    return 1\n\n\ndef drop():\n    return 2\n",
        "def keep():\n    return 1\n",
        removed=("drop",),
    ),
]

RUST = [
    Case(
        "decorator",
        'fn a() -> u32 {\n    1\n}\n\n#[cfg(feature = "fast")]\nfn b() -> u32 {\n    2\n}\n',
        'fn a() -> u32 {\n    1\n}\n\n#[cfg(feature = "slow")]\nfn b() -> u32 {\n    2\n}\n',
        changed=("b",),
    ),
    Case(
        "between",
        "fn a() -> u32 {\n    1\n}\n\nuse std::fmt;\n\nfn b() -> u32 {\n    2\n}\n",
        "fn a() -> u32 {\n    1\n}\n\nuse std::io;\n\nfn b() -> u32 {\n    2\n}\n",
    ),
    Case(
        "nested",
        "fn outer() -> u32 {\n    fn inner() -> u32 {\n        1\n    }\n"
        "    let total = inner();\n    total\n}\n",
        "fn outer() -> u32 {\n    fn inner() -> u32 {\n        1\n    }\n"
        "    let total = inner() + 1;\n    total\n}\n",
        changed=("outer",),
    ),
    Case(
        "member",
        "struct Client;\n\nimpl Client {\n    fn connect(&self) -> u32 {\n        1\n    }\n"
        "    const TIMEOUT: u32 = 5;\n\n    fn close(&self) -> u32 {\n        2\n    }\n}\n",
        "struct Client;\n\nimpl Client {\n    fn connect(&self) -> u32 {\n        1\n    }\n"
        "    const TIMEOUT: u32 = 6;\n\n    fn close(&self) -> u32 {\n        2\n    }\n}\n",
        changed=("TIMEOUT",),
        qualified=("Client::TIMEOUT",),
    ),
    Case(
        "renamed",
        "pub fn load_config(path: &str) -> String {\n    let text = std::fs::read_to_string(path);\n"
        "    text.unwrap_or_default()\n}\n",
        "pub fn read_config(path: &str) -> String {\n    let text = std::fs::read_to_string(path);\n"
        "    text.unwrap_or_default()\n}\n",
        renamed=(("load_config", "read_config"),),
    ),
    Case(
        "deleted",
        "fn keep() -> u32 {\n    1\n}\n\nfn drop() -> u32 {\n    2\n}\n",
        "fn keep() -> u32 {\n    1\n}\n",
        removed=("drop",),
    ),
]

GO = [
    Case(
        "decorator",
        "package app\n\nfunc a() int {\n\treturn 1\n}\n\n// b returns two.\n//\n//go:noinline\n"
        "func b() int {\n\treturn 2\n}\n",
        "package app\n\nfunc a() int {\n\treturn 1\n}\n\n// b returns two.\n//\n//go:nosplit\n"
        "func b() int {\n\treturn 2\n}\n",
        changed=("b",),
    ),
    Case(
        "between",
        "package app\n\nfunc a() int {\n\treturn 1\n}\n\nvar retries = 3\n\n"
        "func b() int {\n\treturn 2\n}\n",
        "package app\n\nfunc a() int {\n\treturn 1\n}\n\nvar retries = 4\n\n"
        "func b() int {\n\treturn 2\n}\n",
    ),
    Case(
        "nested",
        "package app\n\nfunc outer() int {\n\ttype pair struct {\n\t\tx int\n\t}\n"
        "\ttotal := pair{x: 1}.x\n\treturn total\n}\n",
        "package app\n\nfunc outer() int {\n\ttype pair struct {\n\t\tx int\n\t}\n"
        "\ttotal := pair{x: 2}.x\n\treturn total\n}\n",
        changed=("outer",),
    ),
    Case(
        "member",
        "package app\n\ntype (\n\tClient struct {\n\t\tTimeout int\n\t\tRetries int\n\t}\n)\n\n"
        "func (c *Client) Connect() int {\n\treturn c.Timeout\n}\n",
        "package app\n\ntype (\n\tClient struct {\n\t\tTimeout int\n\t\tRetries int64\n\t}\n)\n\n"
        "func (c *Client) Connect() int {\n\treturn c.Timeout\n}\n",
        changed=("Client",),
    ),
    Case(
        "renamed",
        "package app\n\ntype Client struct{}\n\nfunc (c *Client) Load(path string) string {\n"
        '\ttext := path + ".json"\n\treturn text\n}\n',
        "package app\n\ntype Client struct{}\n\nfunc (c *Client) Read(path string) string {\n"
        '\ttext := path + ".json"\n\treturn text\n}\n',
        renamed=(("Load", "Read"),),
        qualified=("Client.Read",),
    ),
    Case(
        "deleted",
        "package app\n\nfunc keep() int {\n\treturn 1\n}\n\nfunc drop() int {\n\treturn 2\n}\n",
        "package app\n\nfunc keep() int {\n\treturn 1\n}\n",
        removed=("drop",),
    ),
]

TYPESCRIPT = [
    Case(
        "decorator",
        "class Api {\n  a() {\n    return 1\n  }\n  @Get('/items')\n  b() {\n    return 2\n  }\n}\n",
        "class Api {\n  a() {\n    return 1\n  }\n  @Get('/things')\n  b() {\n    return 2\n  }\n}\n",
        changed=("b",),
        qualified=("Api.b",),
    ),
    Case(
        "between",
        "function a() {\n  return 1\n}\nconst RETRIES = 3\nfunction b() {\n  return 2\n}\n",
        "function a() {\n  return 1\n}\nconst RETRIES = 4\nfunction b() {\n  return 2\n}\n",
    ),
    Case(
        "nested",
        "function outer(): number {\n  function inner(): number {\n    return 1\n  }\n"
        "  const total = inner()\n  return total\n}\n",
        "function outer(): number {\n  function inner(): number {\n    return 1\n  }\n"
        "  const total = inner() + 1\n  return total\n}\n",
        changed=("outer",),
    ),
    Case(
        "member",
        "export class Client {\n  connect() {\n    return 1\n  }\n  timeout = 5\n"
        "  close() {\n    return 2\n  }\n}\n",
        "export class Client {\n  connect() {\n    return 1\n  }\n  timeout = 6\n"
        "  close() {\n    return 2\n  }\n}\n",
        changed=("Client",),
    ),
    Case(
        "renamed",
        "export function loadConfig(path: string): string {\n  const text = path + '.json'\n"
        "  return text\n}\n",
        "export function readConfig(path: string): string {\n  const text = path + '.json'\n"
        "  return text\n}\n",
        renamed=(("loadConfig", "readConfig"),),
    ),
    Case(
        "deleted",
        "export function keep() {\n  return 1\n}\n\nexport function drop() {\n  return 2\n}\n",
        "export function keep() {\n  return 1\n}\n",
        removed=("drop",),
    ),
]

JAVA = [
    Case(
        "decorator",
        "public class Api {\n    int a() {\n        return 1;\n    }\n    @Deprecated\n"
        "    int b() {\n        return 2;\n    }\n}\n",
        "public class Api {\n    int a() {\n        return 1;\n    }\n"
        "    @Deprecated(forRemoval = true)\n    int b() {\n        return 2;\n    }\n}\n",
        changed=("b",),
    ),
    Case(
        "between",
        "public class Api {\n    int a() {\n        return 1;\n    }\n"
        "    static final int RETRIES = 3;\n    int b() {\n        return 2;\n    }\n}\n",
        "public class Api {\n    int a() {\n        return 1;\n    }\n"
        "    static final int RETRIES = 4;\n    int b() {\n        return 2;\n    }\n}\n",
        changed=("Api",),
    ),
    Case(
        "nested",
        "public class Outer {\n    int outer() {\n        class Local {\n            int x = 1;\n"
        "        }\n        int total = new Local().x;\n        return total;\n    }\n}\n",
        "public class Outer {\n    int outer() {\n        class Local {\n            int x = 1;\n"
        "        }\n        int total = new Local().x + 1;\n        return total;\n    }\n}\n",
        changed=("outer",),
        qualified=("Outer.outer",),
    ),
    Case(
        "member",
        "public class Client {\n    int connect() {\n        return 1;\n    }\n\n"
        "    int close() {\n        int code = 2;\n        return code;\n    }\n}\n",
        "public class Client {\n    int connect() {\n        return 1;\n    }\n\n"
        "    int close() {\n        int code = 3;\n        return code;\n    }\n}\n",
        changed=("close",),
        qualified=("Client.close",),
    ),
    Case(
        "renamed",
        "public class Loader {\n    String loadConfig(String path) {\n"
        '        String text = path + ".json";\n        return text;\n    }\n}\n',
        "public class Loader {\n    String readConfig(String path) {\n"
        '        String text = path + ".json";\n        return text;\n    }\n}\n',
        renamed=(("loadConfig", "readConfig"),),
    ),
    Case(
        "deleted",
        "public class Api {\n    int keep() {\n        return 1;\n    }\n\n"
        "    int drop() {\n        return 2;\n    }\n}\n",
        "public class Api {\n    int keep() {\n        return 1;\n    }\n}\n",
        removed=("drop",),
    ),
]

LANGUAGES = {"py": PYTHON, "rs": RUST, "go": GO, "ts": TYPESCRIPT, "java": JAVA}


@pytest.fixture(scope="module")
def digests(tmp_path_factory: pytest.TempPathFactory) -> dict[str, FileDiff]:
    """Every case as one file of one PR: the diffs by path."""
    path = tmp_path_factory.mktemp("cases")
    repo = RepoBuilder(path)
    repo.git("init", "-q", "-b", "main")
    files = {f"{case.name}.{suffix}": case for suffix, cases in LANGUAGES.items() for case in cases}
    repo.commit("Cases", {name: case.before for name, case in files.items()})
    repo.commit("Change them", {name: case.after for name, case in files.items()})
    history = History(path)
    return {diff.path: diff for diff in history.diff(history.find_pr("HEAD"))}


@pytest.mark.parametrize(
    ("suffix", "case"),
    [(suffix, case) for suffix, cases in LANGUAGES.items() for case in cases],
    ids=lambda value: value if isinstance(value, str) else value.name,
)
def test_changed_lines_belong_to_the_definitions_they_are_in(
    digests: dict[str, FileDiff], suffix: str, case: Case
) -> None:
    diff = digests[f"{case.name}.{suffix}"]
    expected = FileDigest(
        diff.path, case.added, case.changed, case.removed, case.renamed, unparsed=False
    )
    assert digest_file(diff) == expected
    assert diff.parsed is not None
    if case.qualified:
        assert tuple(change.qualified for change in diff.parsed.definitions) == case.qualified


def test_lines_in_no_definition_are_module_level(digests: dict[str, FileDiff]) -> None:
    parsed = digests["between.py"].parsed
    assert parsed is not None and parsed.definitions == () and parsed.module_lines == 2


def test_a_decorator_change_is_its_definitions(repo: RepoBuilder) -> None:
    """The case the line rule reported as the function above, in the digest and the focus:
    a compiler option changed in the decorator of a kernel."""
    kernel = (
        "def a(x):\n    return x\n\n\n@jit(\n    pass_configs={\n        'fast_math': OFF,\n"
        "    }\n)\ndef b(x):\n    return x * 2\n"
    )
    repo.commit("Kernels (#1)", {"src/kernels.py": kernel})
    repo.commit("Fix fast math in the kernel (#2)", {"src/kernels.py": kernel.replace("OFF", "ON")})
    history = History(repo.path)
    (diff,) = history.diff(history.find_pr("HEAD"))
    assert diff.parsed is not None
    (change,) = diff.parsed.definitions
    assert (change.status, change.qualified, change.lines) == ("changed", "b", 2)
    pr = history.find_pr("HEAD")
    packer = Packer(FakeBackend(), "en", "digest", "", 64, sampling=GREEDY)
    packed = packer.pack(
        pr, compute_facts(pr, (diff,)), (diff,), [], Evidence.of(pr, (diff,)), Usage()
    )
    assert "src/kernels.py (M, +1 -1): changes `b`" in packed.prompt
    (focus,) = focus_places(pr, packed, "en")
    assert focus.symbol == "b" and "`b`" in focus.why and "`a`" not in focus.why


def test_a_file_no_grammar_reads_falls_back_and_says_so(repo: RepoBuilder) -> None:
    repo.commit("Script (#1)", {"src/job.foo": "func run\n  step one\nend\n"})
    repo.commit("Step two (#2)", {"src/job.foo": "func run\n  step two\nend\n"})
    (card,) = cards_for(repo.path, "HEAD~1..HEAD")
    assert isinstance(card, Card) and card.coverage.files_unparsed == ("src/job.foo",)
    history = History(repo.path)
    (diff,) = history.diff(history.find_pr("HEAD"))
    assert diff.parsed is None and digest_file(diff).unparsed


def test_a_file_the_grammar_cannot_read_falls_back(repo: RepoBuilder) -> None:
    broken = "def main(:\n    return {}\n"
    repo.commit("Broken (#1)", {"src/app.py": broken.format(1)})
    repo.commit("Still broken (#2)", {"src/app.py": broken.format(2)})
    history = History(repo.path)
    (diff,) = history.diff(history.find_pr("HEAD"))
    assert diff.parsed is None and digest_file(diff).unparsed


def test_a_blob_missing_from_a_shallow_clone_falls_back(repo: RepoBuilder, tmp_path: Path) -> None:
    repo.commit(
        "Two (#1)", {"src/app.py": "def main():\n    return 0\n\n\ndef two():\n    return 2\n"}
    )
    repo.commit(
        "Three (#2)", {"src/app.py": "def main():\n    return 0\n\n\ndef two():\n    return 3\n"}
    )
    history = History(repo.path)
    diffs = history.diff(history.find_pr("HEAD"), definitions=False)
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo.path}", str(shallow)], check=True
    )
    # The shallow clone has the PR's own version of the file, not its base's.
    (diff,) = with_definitions(diffs, History(shallow).blob)
    assert diff.parsed is None and digest_file(diff).unparsed
    (whole,) = with_definitions(diffs, history.blob)
    assert digest_file(whole) == FileDigest("src/app.py", (), ("two",))


@pytest.mark.parametrize(
    ("path", "source", "qualified"),
    [
        ("a.tsx", "export const View = () => <div />\n", ["View"]),
        ("a.js", "class A {\n  m() {}\n}\nconst f = function () {}\n", ["A", "A.m", "f"]),
        ("a.kt", "class A {\n  fun m() {}\n}\n", ["A", "A.m"]),
        ("a.c", "struct s { int x; };\nstatic int *f(void) { return 0; }\n", ["s", "f"]),
        ("a.cc", "namespace n {\nint A::m() { return 1; }\n}\n", ["n", "n::A::m"]),
        ("a.cs", "public class A {\n  public void M() {}\n}\n", ["A", "A.M"]),
        ("a.rb", "module M\n  class A\n    def m; end\n  end\nend\n", ["M", "M.A", "M.A.m"]),
        ("a.php", "<?php\nclass A {\n  function m() {}\n}\n", ["A", "A::m"]),
        ("a.cu", "__global__ void k(int x) {}\n", ["k"]),
        (
            "a.rs",
            "impl<T> fmt::Display for A<T> {\n    fn fmt(&self) {}\n}\n",
            ["impl fmt::Display for A", "A::fmt"],
        ),
    ],
)
def test_every_grammar_in_the_table_names_its_definitions(
    path: str, source: str, qualified: list[str]
) -> None:
    language = language_of(path)
    assert language is not None
    found = outline(source.encode(), language)
    assert found is not None
    assert [definition.qualified for definition in found.definitions] == qualified


def test_public_api_follows_each_languages_visibility() -> None:
    def public(path: str, source: str) -> list[str]:
        found = outline(source.encode(), language_of(path) or "")
        assert found is not None
        return [d.qualified for d in found.definitions if d.public]

    python = (
        "def f():\n    def g(): pass\nclass A:\n    def m(self): pass\n    def _p(self): pass\n"
    )
    assert public("a.py", python) == ["f", "A", "A.m"]
    rust = "pub fn f() {}\nfn g() {}\npub(crate) fn h() {}\nimpl A {\n    pub fn m() {}\n}\n"
    assert public("a.rs", rust) == ["f", "impl A", "A::m"]
    assert public("a.go", "package a\nfunc F() {}\nfunc g() {}\n") == ["F"]
    assert public("a.ts", "export function f() {}\nfunction g() {}\n") == ["f"]
    assert public("A.java", "public class A {\n  public void m() {}\n  void n() {}\n}\n") == [
        "A",
        "A.m",
    ]


def test_grammars_load_with_no_network(repo: RepoBuilder, no_network: None) -> None:
    """The grammars come from the installed wheel: loading each one, in a fresh process with
    every socket refused, and a whole run here with none, open no connection."""
    script = (
        "import socket\n"
        "def refuse(*args, **kwargs):\n"
        "    raise SystemExit(f'network access attempted: {args!r}')\n"
        "socket.socket.connect = socket.socket.connect_ex = refuse\n"
        "socket.create_connection = socket.getaddrinfo = refuse\n"
        "from prsum.syntax import _LANGUAGES, outline\n"
        "for language in sorted(set(_LANGUAGES.values())):\n"
        "    assert outline(b'', language) is not None, language\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
    repo.commit(
        "Greet (#1)", {"src/app.py": "def main():\n    return 0\n\n\ndef greet():\n    pass\n"}
    )
    (card,) = cards_for(repo.path, "HEAD~1..HEAD")
    assert isinstance(card, Card) and card.coverage.files_unparsed == ()


def test_a_definition_the_patch_does_not_name_is_still_evidence(repo: RepoBuilder) -> None:
    """A change deep in a class: the patch shows neither the class line nor its name, the
    digest names the class, and a card may cite it."""
    entries = "".join(f"        'k{index}': {index},\n" for index in range(12))
    before = f"class Client:\n    def connect(self):\n        return 1\n\n    LIMITS = {{\n{entries}    }}\n"
    repo.commit("Limits (#1)", {"src/client.py": before})
    repo.commit("Raise a limit (#2)", {"src/client.py": before.replace("'k11': 11", "'k11': 12")})
    history = History(repo.path)
    pr = history.find_pr("HEAD")
    diffs = history.diff(pr)
    assert "Client" not in diffs[0].patch and digest_file(diffs[0]).changed == ("Client",)
    assert Evidence.of(pr, diffs).knows("Client")


def test_the_digest_line_says_what_was_renamed_and_removed() -> None:
    change = FileChange("src/loader.py", "M", 3, 9)
    digest = FileDigest("src/loader.py", ("parse",), ("read",), ("drop",), (("load", "fetch"),))
    assert prompts.change_line(change, digest, "en") == (
        "- src/loader.py (M, +3 -9): adds `parse`; changes `read`; renames `load` to `fetch`; "
        "removes `drop`"
    )
    assert prompts.change_line(change, digest, "zh") == (
        "- src/loader.py（M，+3 −9）：新增 `parse`；修改 `read`；重命名 `load` → `fetch`；删除 `drop`"
    )

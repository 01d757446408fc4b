"""Where what a PR changes is used beyond it (prsum.facts.reach): on a real repository through
the pipeline, and the resolution of each language's imports on files given directly."""

from __future__ import annotations

from collections.abc import Sequence

from prsum.facts.reach import definition_reach
from prsum.types import Card, DefinitionChange, FileDiff, ParsedChange
from tests.conftest import RepoBuilder
from tests.pipeline import cards_for


def test_a_card_names_the_unchanged_files_that_import_and_use_a_changed_function(
    repo: RepoBuilder,
) -> None:
    import jsonschema

    from prsum.render import card_to_dict
    from tests.test_render import SCHEMA

    util = "def normalize_path(path):\n    return path.strip()\n"
    repo.commit(
        "Add (#1)",
        {
            "src/pkg/util.py": util,
            "src/pkg/cli.py": "from .util import normalize_path\n\nprint(normalize_path(' a'))\n",
            # a module of another package, its module imported by an absolute name
            "src/pkg/api.py": "from pkg import util as u\n\n\ndef run(x):\n    return u.normalize_path(x)\n",
            # re-exported, not used; a definition of its own by the same name; a test
            "src/pkg/__init__.py": 'from .util import normalize_path\n__all__ = ["normalize_path"]\n',
            "src/pkg/other.py": "def normalize_path(p):\n    return p\n\nnormalize_path('x')\n",
            "src/pkg/paths.py": "from .other import normalize_path\nnormalize_path('y')\n",
            "tests/test_util.py": "from pkg.util import normalize_path\nnormalize_path('')\n",
            # a field annotated with it uses it; a parameter of the same name shadows it
            "src/pkg/config.py": "from .util import normalize_path\n\n\nclass C:\n    f: normalize_path = None\n",
            "src/pkg/shadow.py": "from .util import normalize_path\n\n\ndef g(x, normalize_path=None):\n    return normalize_path(x)\n",
            # swapped out and restored (a test helper's monkeypatch), never called
            "src/pkg/fake.py": "from . import util\n\nsaved = util.normalize_path\nutil.normalize_path = str\n",
            # only a comment names it
            "src/pkg/notes.py": "from .util import normalize_path\n# normalize_path(x) strips\n",
        },
    )
    repo.commit("Strip only the end (#2)", {"src/pkg/util.py": util.replace("strip()", "rstrip()")})
    (card,) = cards_for(repo.path, "HEAD~1..HEAD", strategy="facts", lang="en", cache=False)
    assert isinstance(card, Card)
    assert (
        "Beyond the files this PR changes, `normalize_path` is used in `src/pkg/api.py`, "
        "`src/pkg/cli.py` and `src/pkg/config.py`." in card.body.summary
    )
    document = card_to_dict(card)
    jsonschema.validate(document, SCHEMA)
    assert document["facts"]["reach"] == [
        {
            "name": "normalize_path",
            "path": "src/pkg/util.py",
            "users": ["src/pkg/api.py", "src/pkg/cli.py", "src/pkg/config.py"],
        }
    ]
    (card,) = cards_for(repo.path, "HEAD~1..HEAD", strategy="facts", lang="zh", cache=False)
    assert isinstance(card, Card)
    assert (
        "在本 PR 未改动的文件中，`src/pkg/api.py`、`src/pkg/cli.py`和 `src/pkg/config.py` 使用了 "
        "`normalize_path`。" in card.body.summary
    )
    # a docstring rewritten changes no caller: nothing is told
    documented = util.replace("rstrip()", "rstrip()").replace(
        "def normalize_path(path):\n", 'def normalize_path(path):\n    """Strip."""\n'
    )
    repo.commit("Document (#3)", {"src/pkg/util.py": documented.replace("strip()", "rstrip()")})
    repo.commit(
        "Reword (#4)",
        {
            "src/pkg/util.py": documented.replace("strip()", "rstrip()").replace(
                "Strip.", "Strip the end."
            )
        },
    )
    (card,) = cards_for(repo.path, "HEAD~1..HEAD", strategy="facts", lang="en", cache=False)
    assert isinstance(card, Card) and card.facts.reach == ()


def reach_in(
    files: dict[str, str], changed: str, name: str, kind: str = "function_declaration"
) -> tuple[str, ...]:
    """The users that `definition_reach` finds of `name` (a definition of the grammar's node
    type `kind`), changed in the file `changed`, among `files` (the tree at the PR's commit,
    the PR's own file left out)."""
    definition = DefinitionChange("changed", name, name, kind, 2, True)
    # the PR rewrites the definition's first line, a line of code
    lines = files[changed].splitlines()
    number = next(index for index, line in enumerate(lines, start=1) if name in line)
    patch = f"@@ -{number} +{number} @@\n-old\n+{lines[number - 1]}\n"
    diff = FileDiff(changed, patch, ParsedChange((definition,), 0))

    def grep(texts: Sequence[str]) -> tuple[tuple[str, int, str], ...]:
        return tuple(
            (path, number, line)
            for path, text in files.items()
            for number, line in enumerate(text.split("\n"), start=1)
            if any(t in line for t in texts)
        )

    def read(path: str, max_bytes: int) -> bytes | None:
        return files[path].encode()[:max_bytes] if path in files else None

    found = definition_reach((diff,), frozenset({changed}), grep, read)
    return tuple(user for reach in found if reach.name == name for user in reach.users)


def test_typescript_imports_are_resolved_to_the_changed_file() -> None:
    files = {
        # a clause over several lines, and a namespace import with the ESM extension
        "src/router/a.ts": "import {\n  other,\n  checkOptional,\n} from '../utils/url'\ncheckOptional(p)\n",
        "src/router/c.ts": "import * as url from '../utils/url.js'\nurl.checkOptional(p)\n",
        "src/router/alias.ts": "import { checkOptional as check } from '../utils/url'\ncheck(p)\n",
        # another module's function of the same name; a re-export; a string
        "src/router/b.ts": "import { checkOptional } from '../other/url'\ncheckOptional(p)\n",
        "src/index.ts": "export { checkOptional } from './utils/url'\n",
        "src/utils/all.ts": "import { checkOptional } from './url'\n"
        "export default {\n  version: '1',\n  checkOptional,\n}\n",
        "src/router/d.ts": "import { checkOptional } from '../utils/url'\nlog('checkOptional')\n",
        # a package's own index, imported as its folder
        "src/lib/x.ts": "import { checkOptional } from '../fmt'\ncheckOptional()\n",
        # an option's key of the same name is no binding; a parameter's shadows the import
        "src/router/opts.ts": "import { checkOptional } from '../utils/url'\n"
        "interface O {\n  checkOptional?: (p: string) => boolean\n}\ncheckOptional(p)\n",
        "src/router/param.ts": "import { checkOptional } from '../utils/url'\n"
        "function f(checkOptional: boolean) { return checkOptional }\n",
        # an exported object re-exports; a regex's backtick opens no template literal
        "src/utils/jwt.ts": "import { checkOptional } from './url'\n"
        "export const Jwt = { checkOptional, other }\n",
        "src/router/re.ts": "import { checkOptional } from '../utils/url'\n"
        "const r = /`/\nconst s = `checkOptional()`\n",
        "src/utils/url.ts": "export function checkOptional() {}\n",
        "src/fmt/index.ts": "export function checkOptional() {}\n",
    }
    assert reach_in(files, "src/utils/url.ts", "checkOptional") == (
        "src/router/a.ts",
        "src/router/alias.ts",
        "src/router/c.ts",
        "src/router/opts.ts",
    )
    assert reach_in(files, "src/fmt/index.ts", "checkOptional") == ("src/lib/x.ts",)
    # `.` is the folder: its index, never a file of the folder's name beside it
    files = {
        "src/router.ts": "export function route() {}\n",
        "src/router/index.ts": "export function route() {}\n",
        "src/router/use.ts": "import { route } from '.'\nroute()\n",
    }
    assert reach_in(files, "src/router.ts", "route") == ()
    assert reach_in(files, "src/router/index.ts", "route") == ("src/router/use.ts",)


def test_an_absolute_import_is_no_local_package_of_the_same_name() -> None:
    files = {
        "myapp/__init__.py": "",
        "myapp/email/__init__.py": "",
        "myapp/email/utils.py": "def formatdate():\n    return 1\n",
        "myapp/notify.py": "from email.utils import formatdate\nformatdate()\n",  # the standard library's
        "app/__init__.py": "",
        "app/ray/util.py": "def node_ip():\n    return 1\n",
        "app/x.py": "from ray.util import node_ip\nnode_ip()\n",  # the installed ray's
        "src/ray2/util.py": "def node_ip():\n    return 1\n",
        "src/cli.py": "from ray2.util import node_ip\nnode_ip()\n",  # src/ is no package
    }
    assert reach_in(files, "myapp/email/utils.py", "formatdate") == ()
    assert reach_in(files, "app/ray/util.py", "node_ip") == ()
    assert reach_in(files, "src/ray2/util.py", "node_ip") == ("src/cli.py",)
    # a deprecation shim hands the function on: it does not use it
    files["src/old.py"] = (
        "def __getattr__(name):\n    from ray2.util import node_ip\n\n    return node_ip\n"
    )
    assert reach_in(files, "src/ray2/util.py", "node_ip") == ("src/cli.py",)


def test_go_uses_are_an_exported_name_through_the_import_of_its_package() -> None:
    files = {
        "go.mod": "module example.com/m\n\ngo 1.22\n",
        "pkg/util/util.go": "package util\n\nfunc Normalize(s string) string { return s }\n",
        "cmd/main.go": 'package main\n\nimport (\n\t"example.com/m/pkg/util"\n)\n\nfunc main() { util.Normalize(y) }\n',
        "cmd/alias.go": 'package main\n\nimport u "example.com/m/pkg/util"\n\nfunc g() { u.Normalize(y) }\n',
        # another module's package of the same folder name; the call without the import
        "cmd/other.go": 'package main\n\nimport "github.com/x/pkg/util"\n\nfunc f() { util.Normalize(y) }\n',
        "cmd/else.go": "package main\n\nfunc f() { util.Normalize(y) }\n",
        # a call in a comment or a string
        "cmd/text.go": 'package main\n\nimport "example.com/m/pkg/util"\n\n// util.Normalize(x)\nvar s = "util.Normalize"\n',
        # the same package calls it by spelling alone, which a method or a field shares: not read
        "pkg/util/other.go": "package util\n\nfunc other() { Normalize(x) }\n",
    }
    assert reach_in(files, "pkg/util/util.go", "Normalize") == ("cmd/alias.go", "cmd/main.go")


def test_a_sentence_names_three_files_and_never_counts_the_rest() -> None:
    from prsum.i18n import reach_sentence
    from prsum.types import Reach

    reach = Reach("parse", "src/p.py", ("a.py", "b.py", "c.py", "d.py"))
    assert reach_sentence([reach], 3, "en") == (
        "Beyond the files this PR changes, `parse` is used in `a.py`, `b.py`, `c.py` and other files."
    )
    assert reach_sentence([reach], 3, "zh") == (
        "在本 PR 未改动的文件中，`a.py`、`b.py`、`c.py` 等文件使用了 `parse`。"
    )


def test_classes_languages_not_read_and_names_too_short_reach_nothing() -> None:
    files = {"a.py": "class Config:\n    pass\n", "b.py": "from a import Config\nConfig()\n"}
    assert reach_in(files, "a.py", "Config", "function_definition") == ("b.py",)
    assert reach_in(files, "a.py", "Config", "class_definition") == ()
    files = {
        "src/util.rs": "pub fn normalize() {}\n",
        "src/main.rs": "use crate::util::normalize;\nfn main() { normalize() }\n",
    }
    assert reach_in(files, "src/util.rs", "normalize") == ()
    files = {"a.py": "def run():\n    pass\n", "b.py": "from a import run\nrun()\n"}
    assert reach_in(files, "a.py", "run") == ()

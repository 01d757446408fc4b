"""The definitions of a source file and the lines each spans, read by a parser (tree-sitter).

The only module that imports `tree_sitter` and `tree_sitter_language_pack` (lazily: a run that
reads no source file never loads them). The pack's grammars are compiled into its wheel, so
nothing is downloaded: a file whose language is not in `_LANGUAGES`, or that the grammar
cannot read without errors, gets no outline, and prsum.digest falls back to its line rule.

An outline keeps a file's lines only to hash them (to tell a renamed definition); what the
digest keeps of it is names, line numbers and counts, never the text of a file.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Query

# The pack's grammar for each file ending; other endings fall back to the line rule.
_LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".rs": "rust",
    ".go": "go",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".c": "c",
    ".h": "cpp",  # C and C++ headers alike: C++'s grammar reads both
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".cu": "cuda",
    ".cuh": "cuda",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
}

_TYPESCRIPT = (
    "function_declaration",
    "generator_function_declaration",
    "class_declaration",
    "abstract_class_declaration",
    "method_definition",
    "abstract_method_signature",
    "interface_declaration",
    "type_alias_declaration",
    "enum_declaration",
    "internal_module",
    "module",
    "variable_declarator",
    "public_field_definition",
)
_CPP = (
    "function_definition",
    "class_specifier",
    "struct_specifier",
    "union_specifier",
    "enum_specifier",
    "namespace_definition",
)
# The node types that are definitions, by grammar.
_DEFINITIONS: dict[str, tuple[str, ...]] = {
    "python": ("function_definition", "class_definition"),
    "rust": (
        "function_item",
        "function_signature_item",
        "struct_item",
        "enum_item",
        "union_item",
        "trait_item",
        "impl_item",
        "mod_item",
        "type_item",
        "const_item",
        "static_item",
        "macro_definition",
    ),
    "go": ("function_declaration", "method_declaration", "type_spec"),
    "typescript": _TYPESCRIPT,
    "tsx": _TYPESCRIPT,
    "javascript": (
        "function_declaration",
        "generator_function_declaration",
        "class_declaration",
        "method_definition",
        "variable_declarator",
        "field_definition",
    ),
    "java": (
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "annotation_type_declaration",
        "method_declaration",
        "constructor_declaration",
    ),
    "kotlin": ("class_declaration", "object_declaration", "function_declaration", "type_alias"),
    "c": ("function_definition", "struct_specifier", "union_specifier", "enum_specifier"),
    "cpp": _CPP,
    "cuda": _CPP,
    "csharp": (
        "class_declaration",
        "struct_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "method_declaration",
        "constructor_declaration",
        "property_declaration",
        "namespace_declaration",
    ),
    "ruby": ("method", "singleton_method", "class", "module"),
    "php": (
        "function_definition",
        "class_declaration",
        "interface_declaration",
        "trait_declaration",
        "enum_declaration",
        "method_declaration",
    ),
}
# Qualified names join with `::` where the language writes them so.
_DOUBLE_COLON = frozenset({"rust", "cpp", "cuda", "php"})
# A definition takes the span of the node around it when it is that node's only definition:
# decorators (Python), `export` (TypeScript), `const f = () => …`, `template <…>`, `type X …`.
_WRAPPERS = frozenset(
    {
        "decorated_definition",
        "export_statement",
        "lexical_declaration",
        "variable_declaration",
        "template_declaration",
        "type_declaration",
        "ambient_declaration",
        "expression_statement",
    }
)
# Nodes just above a definition that belong to it: decorators, attributes, doc comments.
_ATTACHED = frozenset(
    {
        "decorator",
        "attribute_item",
        "comment",
        "line_comment",
        "block_comment",
        "multiline_comment",
    }
)
_FUNCTIONS = frozenset(
    {
        "function_definition",
        "function_item",
        "function_declaration",
        "generator_function_declaration",
        "method_declaration",
        "method_definition",
        "constructor_declaration",
        "method",
        "singleton_method",
        "variable_declarator",
        "public_field_definition",
        "field_definition",
    }
)
# A variable or field is a definition when its value is a function.
_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
_NEEDS_VALUE = frozenset({"variable_declarator", "public_field_definition", "field_definition"})
_NEEDS_BODY = frozenset(
    {"struct_specifier", "class_specifier", "union_specifier", "enum_specifier"}
)
_NAME_NODES = (
    "identifier",
    "type_identifier",
    "simple_identifier",
    "constant",
    "name",
    "scope_resolution",
)
_DECLARATOR_NAMES = frozenset(
    {
        "identifier",
        "field_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
    }
)
# A file this large is most likely generated; parsing it would cost more than it tells.
MAX_SOURCE_BYTES = 1 << 20


@dataclass(frozen=True)
class Definition:
    """One definition of a file, with the lines it spans."""

    name: str  # as the code writes it where it is defined: `method`
    qualified: str  # with the definitions around it: `Class.method`, `Type::method`
    kind: str  # the grammar's node type: `function_definition`, `impl_item` …
    start: int  # first line (from 1), its decorators, attributes and doc comments included
    end: int  # last line
    parent: int | None  # the enclosing definition's index in the outline
    public: bool  # part of the public API by the language's rule of visibility


@dataclass(frozen=True)
class Outline:
    """A file's definitions, parents before children, and what renames keep of each."""

    definitions: tuple[Definition, ...]
    _lines: tuple[bytes, ...]

    def body(self, index: int, names: tuple[str, ...]) -> Counter[int]:
        """The definition's non-blank lines as hashes, `names` masked: what a renamed
        definition keeps (masked, its old and new names are the same)."""
        definition = self.definitions[index]
        masks = [name.encode() for name in names]
        hashes: Counter[int] = Counter()
        for line in self._lines[definition.start - 1 : definition.end]:
            text = line.strip()
            for mask in masks:
                text = text.replace(mask, b"\0")
            if text:
                hashes[zlib.crc32(text)] += 1
        return hashes


# The outline of a version that does not exist: an added file's old one, a deleted file's new.
EMPTY = Outline((), ())


def language_of(path: str) -> str | None:
    """The grammar that reads `path`, by its ending, if prsum knows one."""
    return _LANGUAGES.get(PurePosixPath(path).suffix.lower())


@cache
def _tools(language: str) -> tuple[Parser, Query] | None:
    """The language's parser and its query for definitions; None where the pack lacks it."""
    try:
        from tree_sitter import Parser, Query, QueryError
        from tree_sitter_language_pack import get_language
    except ImportError:
        return None
    try:
        grammar = get_language(language)  # type: ignore[arg-type]
        query = Query(grammar, "[" + " ".join(f"({t})" for t in _DEFINITIONS[language]) + "] @d")
    except (LookupError, OSError, QueryError):
        return None
    return Parser(grammar), query


def outline(source: bytes, language: str) -> Outline | None:
    """The definitions in `source`; None where the grammar cannot read it without errors
    (a line's definition would then be a guess)."""
    tools = _tools(language)
    if tools is None:
        return None
    from tree_sitter import QueryCursor

    parser, query = tools
    tree = parser.parse(source)
    if tree.root_node.has_error:
        return None
    nodes = sorted(
        QueryCursor(query).captures(tree.root_node).get("d", []),
        key=lambda node: (node.start_byte, -node.end_byte),
    )
    separator = "::" if language in _DOUBLE_COLON else "."
    definitions: list[Definition] = []
    scopes: list[str] = []
    open_nodes: list[tuple[int, int]] = []  # (end byte, index) of the definitions around
    for node in nodes:
        named = _name(node)
        if named is None:
            continue
        name, own_scope = named
        while open_nodes and open_nodes[-1][0] <= node.start_byte:
            open_nodes.pop()
        parent = open_nodes[-1][1] if open_nodes else None
        qualified = name if parent is None else f"{scopes[parent]}{separator}{name}"
        if node.type == "method_declaration" and language == "go":
            qualified = f"{_go_receiver(node)}.{name}"
        if node.type == "impl_item":
            qualified = _impl_header(node)
        outer = _outermost(node)
        enclosing = definitions[parent] if parent is not None else None
        public = _visible(language, node, outer, name) and (
            enclosing is None or (enclosing.public and enclosing.kind not in _FUNCTIONS)
        )
        definitions.append(
            Definition(
                name=name.rsplit("::", 1)[-1],
                qualified=qualified,
                kind=node.type,
                start=_first_line(outer, source),
                end=_last_line(node),
                parent=parent,
                public=public,
            )
        )
        scopes.append(own_scope or qualified)
        open_nodes.append((node.end_byte, len(definitions) - 1))
    return Outline(tuple(definitions), tuple(source.split(b"\n")))


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", errors="replace") if node is not None and node.text else ""


def _type_name(node: Node | None) -> str:
    """A type as a name: `*Router[T]` and `Router<T>` are `Router`."""
    text = _text(node).lstrip("*&").strip()
    for stop in "<[":
        text = text.split(stop, 1)[0]
    return text.strip()


def _name(node: Node) -> tuple[str, str | None] | None:
    """The definition's name and, where its children are named after something else (an
    `impl` block after its type), that scope; None for what only looks like a definition."""
    if node.type in _NEEDS_VALUE:
        value = node.child_by_field_name("value")
        if value is None or value.type not in _FUNCTION_VALUES:
            return None
    if node.type in _NEEDS_BODY and node.child_by_field_name("body") is None:
        return None  # `struct s x;` uses a type, it does not define one
    if node.type == "impl_item":
        name = _type_name(node.child_by_field_name("type"))
        return (name, name) if name else None
    named = node.child_by_field_name("name")
    if named is None and node.child_by_field_name("declarator") is not None:
        named = _declared(node)
    if named is None:
        named = next((child for child in node.named_children if child.type in _NAME_NODES), None)
    name = _text(named).strip()
    return (name, None) if name else None


def _declared(node: Node) -> Node | None:
    """The name a C or C++ function declares, under its pointer and function declarators."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type not in _DECLARATOR_NAMES:
        declarator = declarator.child_by_field_name("declarator")
    return declarator


def _go_receiver(node: Node) -> str:
    receiver = node.child_by_field_name("receiver")
    parameter = receiver.named_children[0] if receiver and receiver.named_children else None
    return _type_name(parameter.child_by_field_name("type") if parameter else None)


def _impl_header(node: Node) -> str:
    """`impl Type` or `impl Trait for Type`, without generics."""
    trait = node.child_by_field_name("trait")
    target = _type_name(node.child_by_field_name("type"))
    return f"impl {_type_name(trait)} for {target}" if trait else f"impl {target}"


def _outermost(node: Node) -> Node:
    """The node whose span the definition takes: the wrappers around it that hold only it."""
    while (
        (parent := node.parent) is not None
        and parent.type in _WRAPPERS
        and sum(1 for child in parent.named_children if child.type == node.type) == 1
    ):
        node = parent
    return node


def _starts_line(node: Node, source: bytes) -> bool:
    line_start = node.start_byte - node.start_point.column
    return not source[line_start : node.start_byte].strip()


def _first_line(node: Node, source: bytes) -> int:
    """The definition's first line, counting the decorators, attributes and comments right
    above it (no blank line between) that start their own lines."""
    first = node.start_point.row
    sibling = node.prev_named_sibling
    while (
        sibling is not None
        and sibling.type in _ATTACHED
        and _last_line(sibling) >= first
        and _starts_line(sibling, source)
    ):
        first = sibling.start_point.row
        sibling = sibling.prev_named_sibling
    return first + 1


def _last_line(node: Node) -> int:
    """The node's last line (from 1): a node that ends with its line's newline ends there."""
    end = node.end_point
    return end.row if end.column == 0 and end.row > node.start_point.row else end.row + 1


def _modifier_words(node: Node) -> set[str]:
    words: set[str] = set()
    for child in node.children:
        if child.type in ("modifiers", "modifier"):
            words.update(_text(child).split())
    return words


def _visible(language: str, node: Node, outer: Node, name: str) -> bool:
    """Whether the definition is visible outside its module by the language's own rule."""
    rule = _VISIBILITY.get(language)
    return rule(node, outer, name) if rule is not None else False


def _rust_visible(node: Node, outer: Node, name: str) -> bool:
    if node.type == "impl_item":
        return True  # an impl block shows what its `pub` items show
    return any(
        child.type == "visibility_modifier" and _text(child) == "pub" for child in node.children
    )


def _kotlin_visible(node: Node, outer: Node, name: str) -> bool:
    return not _modifier_words(node) & {"private", "internal", "protected"}


_VISIBILITY: dict[str, Callable[[Node, Node, str], bool]] = {
    "python": lambda node, outer, name: not name.startswith("_"),
    "rust": _rust_visible,
    "go": lambda node, outer, name: name[:1].isupper(),
    "typescript": lambda node, outer, name: outer.type == "export_statement",
    "tsx": lambda node, outer, name: outer.type == "export_statement",
    "javascript": lambda node, outer, name: outer.type == "export_statement",
    "java": lambda node, outer, name: "public" in _modifier_words(node),
    "csharp": lambda node, outer, name: "public" in _modifier_words(node),
    "kotlin": _kotlin_visible,
}

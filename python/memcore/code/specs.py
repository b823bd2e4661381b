"""Per-language tables telling the chunker which syntax nodes are definitions.

Node type names are those of the grammars' PyPI wheels (see :mod:`memcore.code.grammars`).
Behaviour that a table cannot express (names of Rust impls, Go receivers, functions held
in JavaScript constants) lives in :mod:`memcore.code.syntax`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

CHUNK_TYPES: frozenset[str] = frozenset(
    {
        "function",
        "method",
        "class",
        "impl",
        "struct",
        "enum",
        "interface",
        "trait",
        "type",
        "macro",
        "module",
        "block",
        "window",
    }
)
"""Every ``chunk_type`` the chunker emits. ``module`` is top-level code between
definitions (and Rust/Ruby modules, namespaces); ``block`` is code inside a class-like
container between its members; ``window`` is a line window of an unparsed file."""


def _frozen(mapping: dict[str, str]) -> Mapping[str, str]:
    return MappingProxyType(mapping)


@dataclass(frozen=True)
class LanguageSpec:
    """How one grammar spells definitions.

    Attributes:
        definitions: Node type → chunk type, for nodes that become their own chunk.
        containers: Node type → scope keyword (``class``, ``impl``, ``mod``...) for
            definitions whose members get chunks of their own under that scope.
        wrappers: Node types that wrap one definition (decorators, ``export``, templates);
            the wrapper's whole range belongs to the chunk.
        attached: Comment, decorator and attribute node types that belong to the
            definition right below them.
        body_required: Definition node types that only count with a ``body`` (a C
            ``struct P;``, a Java interface method, ``mod foo;`` in Rust).
    """

    definitions: Mapping[str, str]
    containers: Mapping[str, str] = field(default_factory=lambda: _frozen({}))
    wrappers: frozenset[str] = frozenset()
    attached: frozenset[str] = frozenset()
    body_required: frozenset[str] = frozenset()


_PYTHON = LanguageSpec(
    definitions=_frozen({"function_definition": "function", "class_definition": "class"}),
    containers=_frozen({"class_definition": "class"}),
    wrappers=frozenset({"decorated_definition"}),
    attached=frozenset({"comment"}),
)

_RUST = LanguageSpec(
    definitions=_frozen(
        {
            "function_item": "function",
            "struct_item": "struct",
            "union_item": "struct",
            "enum_item": "enum",
            "trait_item": "trait",
            "impl_item": "impl",
            "mod_item": "module",
            "type_item": "type",
            "macro_definition": "macro",
        }
    ),
    containers=_frozen({"impl_item": "impl", "trait_item": "trait", "mod_item": "mod"}),
    attached=frozenset({"line_comment", "block_comment", "attribute_item"}),
    body_required=frozenset({"mod_item"}),
)

_GO = LanguageSpec(
    definitions=_frozen(
        {
            "function_declaration": "function",
            "method_declaration": "method",
            "type_declaration": "type",  # refined to struct/interface by its type_spec
        }
    ),
    attached=frozenset({"comment"}),
)

_JS_DEFINITIONS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    # The anonymous forms only reach the chunker as `export default function () {}`.
    "function_expression": "function",
    "function": "function",
    "class": "class",
    # `const f = () => ...`: kept only when a declarator holds a function (see syntax).
    "lexical_declaration": "function",
    "variable_declaration": "function",
    "method_definition": "method",
}
_JS_CONTAINERS = {"class_declaration": "class", "class": "class"}

_JAVASCRIPT = LanguageSpec(
    definitions=_frozen({**_JS_DEFINITIONS, "field_definition": "method"}),
    containers=_frozen(_JS_CONTAINERS),
    wrappers=frozenset({"export_statement"}),
    attached=frozenset({"comment", "decorator"}),
)

_TYPESCRIPT = LanguageSpec(
    definitions=_frozen(
        {
            **_JS_DEFINITIONS,
            "abstract_class_declaration": "class",
            "interface_declaration": "interface",
            "type_alias_declaration": "type",
            "enum_declaration": "enum",
            "internal_module": "module",
            # A class property holding an arrow function is a method in all but name.
            "public_field_definition": "method",
        }
    ),
    containers=_frozen(
        {**_JS_CONTAINERS, "abstract_class_declaration": "class", "internal_module": "namespace"}
    ),
    # `namespace NS {}` parses as an expression statement around an internal_module.
    wrappers=frozenset({"export_statement", "expression_statement", "ambient_declaration"}),
    attached=frozenset({"comment", "decorator"}),
)

_JAVA = LanguageSpec(
    definitions=_frozen(
        {
            "class_declaration": "class",
            "record_declaration": "class",
            "interface_declaration": "interface",
            "annotation_type_declaration": "interface",
            "enum_declaration": "enum",
            "method_declaration": "method",
            "constructor_declaration": "method",
        }
    ),
    containers=_frozen(
        {
            "class_declaration": "class",
            "record_declaration": "record",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
        }
    ),
    attached=frozenset({"line_comment", "block_comment"}),
    body_required=frozenset({"method_declaration"}),
)

_C_DEFINITIONS = {
    "function_definition": "function",
    "struct_specifier": "struct",
    "union_specifier": "struct",
    "enum_specifier": "enum",
    "type_definition": "type",
}
_C_BODY_REQUIRED = frozenset({"struct_specifier", "union_specifier", "enum_specifier"})

_C = LanguageSpec(
    definitions=_frozen(_C_DEFINITIONS),
    attached=frozenset({"comment"}),
    body_required=_C_BODY_REQUIRED,
)

_CPP = LanguageSpec(
    definitions=_frozen(
        {**_C_DEFINITIONS, "class_specifier": "class", "namespace_definition": "module"}
    ),
    containers=_frozen(
        {
            "class_specifier": "class",
            "struct_specifier": "struct",
            "namespace_definition": "namespace",
        }
    ),
    wrappers=frozenset({"template_declaration"}),
    attached=frozenset({"comment"}),
    body_required=_C_BODY_REQUIRED | {"class_specifier", "namespace_definition"},
)

_C_SHARP = LanguageSpec(
    definitions=_frozen(
        {
            "class_declaration": "class",
            "record_declaration": "class",
            "struct_declaration": "struct",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "namespace_declaration": "module",
            "method_declaration": "method",
            "constructor_declaration": "method",
            "destructor_declaration": "method",
            "operator_declaration": "method",
        }
    ),
    containers=_frozen(
        {
            "class_declaration": "class",
            "record_declaration": "record",
            "struct_declaration": "struct",
            "interface_declaration": "interface",
            "namespace_declaration": "namespace",
        }
    ),
    attached=frozenset({"comment"}),
    body_required=frozenset({"method_declaration"}),
)

_RUBY = LanguageSpec(
    definitions=_frozen(
        {"method": "function", "singleton_method": "function", "class": "class", "module": "module"}
    ),
    containers=_frozen({"class": "class", "module": "module"}),
    attached=frozenset({"comment"}),
)

_PHP = LanguageSpec(
    definitions=_frozen(
        {
            "function_definition": "function",
            "class_declaration": "class",
            "interface_declaration": "interface",
            "trait_declaration": "trait",
            "enum_declaration": "enum",
            "method_declaration": "method",
            "namespace_definition": "module",
        }
    ),
    containers=_frozen(
        {
            "class_declaration": "class",
            "interface_declaration": "interface",
            "trait_declaration": "trait",
            "enum_declaration": "enum",
            "namespace_definition": "namespace",
        }
    ),
    attached=frozenset({"comment"}),
    body_required=frozenset({"method_declaration", "namespace_definition"}),
)

_BASH = LanguageSpec(
    definitions=_frozen({"function_definition": "function"}),
    attached=frozenset({"comment"}),
)

_SPECS: dict[str, LanguageSpec] = {
    "python": _PYTHON,
    "rust": _RUST,
    "go": _GO,
    "javascript": _JAVASCRIPT,
    "typescript": _TYPESCRIPT,
    "tsx": _TYPESCRIPT,
    "java": _JAVA,
    "c": _C,
    "cpp": _CPP,
    "c_sharp": _C_SHARP,
    "ruby": _RUBY,
    "php": _PHP,
    "bash": _BASH,
}

SPECS: Mapping[str, LanguageSpec] = MappingProxyType(_SPECS)
"""Language name → spec, for every language the chunker splits along its syntax tree."""

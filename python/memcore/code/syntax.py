"""Cut a parsed file into line segments along its definitions, each with its parent scope.

Only the top level and the bodies of class-like containers are walked: a function is one
segment however many closures it holds, a class is a header segment followed by one
segment per member. Every line of the file lands in some segment (code between
definitions becomes ``module`` or ``block`` segments), so nothing is lost to the index;
the chunker later drops segments made only of closing braces and splits long ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from memcore.code.specs import LanguageSpec

# Containers whose functions stay functions (they are namespaces, not types).
_NAMESPACE_KEYWORDS = frozenset({"mod", "namespace"})
# Value node types that make a variable or field a function definition.
_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
_VARIABLE_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration"})
_FIELD_DEFINITIONS = frozenset({"field_definition", "public_field_definition"})
_WRAPPED_FIELDS = ("definition", "declaration", "value")


@dataclass(frozen=True, slots=True)
class Segment:
    """A line range of a file and what it holds.

    Attributes:
        start: First line, 0-based.
        end: Last line, 0-based, inclusive.
        chunk_type: One of :data:`memcore.code.specs.CHUNK_TYPES`.
        name: The definition's name; for code between definitions, the enclosing
            container's name or the file name.
        scope: Labels of the enclosing scopes, outermost first (``("class Auth",)``);
            empty at module level.
        signature: Line range (0-based, inclusive) of the definition's signature, repeated
            at the top of each window when the segment is too long for one chunk.
    """

    start: int
    end: int
    chunk_type: str
    name: str
    scope: tuple[str, ...]
    signature: tuple[int, int] | None


@dataclass(frozen=True, slots=True)
class _Definition:
    start: int
    end: int
    kind: str
    name: str
    label: str | None  # scope label when this is a container with a body
    body: Node | None
    core: Node  # the definition node itself, inside any wrapper
    signature: tuple[int, int]


def segment_tree(
    root: Node, source: bytes, spec: LanguageSpec, module_name: str, line_count: int
) -> list[Segment]:
    """Segment a parsed file.

    Args:
        root: The tree's root node.
        source: The bytes that were parsed (columns are byte offsets).
        spec: The language's definition tables.
        module_name: Name given to top-level code between definitions (the file name).
        line_count: Number of lines in the file.

    Returns:
        Segments in file order, covering every line at least once.
    """
    walker = _Walker(spec, source.split(b"\n"))
    segments = walker.region(
        root.named_children, 0, line_count - 1, scope=(), gap_type="module", gap_name=module_name
    )
    return list(segments)


class _Walker:
    def __init__(self, spec: LanguageSpec, byte_lines: list[bytes]) -> None:
        self._spec = spec
        self._lines = byte_lines

    def region(
        self,
        nodes: list[Node],
        start: int,
        end: int,
        *,
        scope: tuple[str, ...],
        gap_type: str,
        gap_name: str,
    ) -> Iterator[Segment]:
        """Segments for a run of sibling nodes spanning lines ``start..end``."""
        cursor = start
        for node in nodes:
            definition = self._definition(node, floor=cursor, in_type=_is_type_scope(scope))
            if definition is None:
                continue
            if definition.start > cursor:
                yield Segment(cursor, definition.start - 1, gap_type, gap_name, scope, None)
            yield from self._emit(definition, scope)
            cursor = max(cursor, definition.end + 1)
        if cursor <= end:
            yield Segment(cursor, end, gap_type, gap_name, scope, None)

    def _emit(self, definition: _Definition, scope: tuple[str, ...]) -> Iterator[Segment]:
        receiver = _go_receiver(definition.core)
        if receiver is not None:
            scope = (f"type {receiver}",)  # Go methods live at top level but belong to a type
        whole = Segment(
            definition.start,
            definition.end,
            definition.kind,
            definition.name,
            scope,
            definition.signature,
        )
        if definition.label is None or definition.body is None:
            yield whole
            return
        members = definition.body.named_children
        first = next((i for i, c in enumerate(members) if self._classify(c) is not None), None)
        if first is None:
            yield whole
            return
        first_start = self._attached_start(members[first], floor=definition.signature[1] + 1)
        if first_start <= definition.start:
            yield whole  # a one-line container such as `class K { m() {} }`
            return
        yield Segment(
            definition.start,
            first_start - 1,
            definition.kind,
            definition.name,
            scope,
            definition.signature,
        )
        inner = (*scope, definition.label)
        yield from self.region(
            members[first:],
            first_start,
            definition.end,
            scope=inner,
            gap_type="block",
            gap_name=definition.name,
        )

    def _classify(self, node: Node) -> tuple[Node, str] | None:
        """The definition node inside ``node`` (itself or the wrapped one) and its kind."""
        core = _core_of(node, self._spec)
        if core is None:
            return None
        kind = self._spec.definitions[core.type]
        if core.type in self._spec.body_required and core.child_by_field_name("body") is None:
            return None
        if core.type in _VARIABLE_DECLARATIONS and _function_declarator(core) is None:
            return None
        if core.type in _FIELD_DEFINITIONS and not _holds_function(core):
            return None
        if core.type == "type_declaration":
            kind = _go_type_kind(core)
        return core, kind

    def _definition(self, node: Node, *, floor: int, in_type: bool) -> _Definition | None:
        classified = self._classify(node)
        if classified is None:
            return None
        core, kind = classified
        if in_type and kind == "function":
            kind = "method"
        name = _name_of(core, node)
        body = core.child_by_field_name("body")
        keyword = self._spec.containers.get(core.type)
        label: str | None = None
        if keyword is not None and body is not None:
            label = _impl_label(core) if core.type == "impl_item" else f"{keyword} {name}"
        sig_start = core.start_point.row
        return _Definition(
            start=self._attached_start(node, floor),
            end=_last_row(node),
            kind=kind,
            name=name,
            label=label,
            body=body,
            signature=(sig_start, self._signature_end(core, sig_start)),
            core=core,
        )

    def _attached_start(self, node: Node, floor: int) -> int:
        """First line of ``node`` including the comments and decorators right above it."""
        start = node.start_point.row
        previous = node.prev_named_sibling
        if previous is None and node.parent is not None:
            # Ruby hangs a comment above a class's first member on the class, not the body.
            previous = node.parent.prev_named_sibling
        while (
            previous is not None
            and previous.type in self._spec.attached
            and _last_row(previous) >= start - 1
            and previous.start_point.row >= floor
            and self._starts_its_line(previous)
        ):
            start = previous.start_point.row
            previous = previous.prev_named_sibling
        return start

    def _starts_its_line(self, node: Node) -> bool:
        # A trailing comment (`x = 1  # note`) belongs to the code on its left.
        row, column = node.start_point
        return not self._lines[row][:column].strip()

    def _signature_end(self, core: Node, sig_start: int) -> int:
        """Last line before the body: parameters, return type, where-clauses, ``{``."""
        body = core.child_by_field_name("body")
        if body is None and core.type in _VARIABLE_DECLARATIONS:
            declarator = _function_declarator(core)
            value = declarator.child_by_field_name("value") if declarator else None
            body = value.child_by_field_name("body") if value else None
        before = body.prev_sibling if body is not None else None
        while before is not None and before.is_extra:  # comments above the body are not signature
            before = before.prev_sibling
        return max(sig_start, _last_row(before)) if before is not None else sig_start


def _core_of(node: Node, spec: LanguageSpec) -> Node | None:
    if node.type in spec.definitions:
        return node
    if node.type not in spec.wrappers:
        return None
    for field_name in _WRAPPED_FIELDS:
        child = node.child_by_field_name(field_name)
        if child is not None and child.type in spec.definitions:
            return child
    return next((c for c in node.named_children if c.type in spec.definitions), None)


def _is_type_scope(scope: tuple[str, ...]) -> bool:
    return bool(scope) and scope[-1].split(" ", 1)[0] not in _NAMESPACE_KEYWORDS


def _last_row(node: Node) -> int:
    row, column = node.end_point
    # A node ending at column 0 (Rust `///` comments own their newline) ends a line earlier.
    return row - 1 if column == 0 and row > node.start_point.row else row


def _text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def _name_of(core: Node, outer: Node) -> str:
    name = _special_name(core) or _text(
        core.child_by_field_name("name") or core.child_by_field_name("property")
    )
    if name:
        return name
    declarator = core.child_by_field_name("declarator")
    while declarator is not None:  # C: pointer_declarator > function_declarator > identifier
        inner = declarator.child_by_field_name("declarator")
        if inner is None:
            return _text(declarator)
        declarator = inner
    exported_default = outer.type == "export_statement" and _text(outer).startswith(
        "export default"
    )
    return "default" if exported_default else "<anonymous>"


def _special_name(core: Node) -> str | None:
    """Names that are not in a ``name`` field: Rust impls, Go type groups, JS constants."""
    if core.type == "impl_item":
        return _impl_label(core).removeprefix("impl ")
    if core.type == "type_declaration":
        specs = [c for c in core.named_children if c.type in ("type_spec", "type_alias")]
        return ", ".join(_text(s.child_by_field_name("name")) for s in specs) or None
    declarator = _function_declarator(core) if core.type in _VARIABLE_DECLARATIONS else None
    return _text(declarator.child_by_field_name("name")) if declarator is not None else None


def _type_name(node: Node | None) -> str:
    # `Parser<'a>` is named `Parser`: generics vary between impls of the same type.
    if node is not None and node.type == "generic_type":
        node = node.child_by_field_name("type")
    return _text(node)


def _impl_label(core: Node) -> str:
    type_name = _type_name(core.child_by_field_name("type"))
    trait = core.child_by_field_name("trait")
    # The trait keeps its generics: `impl From<io::Error> for E` and `impl From<fmt::Error>
    # for E` are different scopes.
    return f"impl {_text(trait)} for {type_name}" if trait is not None else f"impl {type_name}"


def _function_declarator(declaration: Node) -> Node | None:
    return next(
        (
            c
            for c in declaration.named_children
            if c.type == "variable_declarator" and _holds_function(c)
        ),
        None,
    )


def _holds_function(node: Node) -> bool:
    value = node.child_by_field_name("value")
    return value is not None and value.type in _FUNCTION_VALUES


def _go_type_kind(declaration: Node) -> str:
    specs = [c for c in declaration.named_children if c.type in ("type_spec", "type_alias")]
    if len(specs) != 1:
        return "type"
    value = specs[0].child_by_field_name("type")
    kind = value.type if value is not None else ""
    return {"struct_type": "struct", "interface_type": "interface"}.get(kind, "type")


def _go_receiver(core: Node) -> str | None:
    """The receiver's type name of a Go method (``*Stack[T]`` → ``Stack``), else None."""
    if core.type != "method_declaration":
        return None
    receiver = core.child_by_field_name("receiver")
    if receiver is None:
        return None
    stack = [receiver]
    while stack:  # the first type identifier in source order
        current = stack.pop()
        if current.type == "type_identifier":
            return _text(current)
        stack.extend(reversed(current.named_children))
    return None

"""Chunking source files along their syntax trees, with parent scopes and line windows."""

from __future__ import annotations

import hashlib

import pytest

from memcore.code import (
    CHUNK_TYPES,
    CodeChunkDraft,
    chunk_file,
    has_grammar,
    supports_syntax_chunking,
)
from memcore.errors import InvalidParameterError

PYTHON = '''\
"""Authentication helpers."""
import hashlib

MAX_ATTEMPTS = 3


def hash_password(password: str) -> str:
    """Return the hex digest of a password."""
    return hashlib.sha256(password.encode()).hexdigest()


class Auth:
    """Checks users against a store."""

    attempts: int = 0

    def __init__(self, store):
        self.store = store

    # Compare in constant time.
    @staticmethod
    def verify(user, password):
        return user.hash == hash_password(password)

    class Token:
        def refresh(self):
            return None


if __name__ == "__main__":
    print(hash_password("x"))
'''

RUST = """\
use std::fmt;

/// A recursive-descent parser.
#[derive(Debug, Clone)]
pub struct Parser<'a> {
    input: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    /// Creates a parser over `input`.
    pub fn new(input: &'a str) -> Self {
        Self { input, pos: 0 }
    }

    pub fn peek(&self) -> Option<char> {
        self.input[self.pos..].chars().next()
    }
}

impl fmt::Display for Parser<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Parser at {}", self.pos)
    }
}

pub trait Visitor {
    fn visit(&mut self, node: &str);
}

pub enum Token {
    Number(f64),
    Ident(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_empty() {
        assert!(Parser::new("").peek().is_none());
    }
}
"""

TYPESCRIPT = """\
import { Logger } from "./logger";

/** Formats a greeting. */
export function greet(name: string): string {
  return `Hello, ${name}`;
}

export const shout = (text: string): string => {
  return text.toUpperCase();
};

const VERSION = "1.0";

@Injectable()
export class Greeter {
  private readonly prefix: string;

  constructor(private logger: Logger) {
    this.prefix = "Hi";
  }

  /** Says hello. */
  @Log()
  hello(name: string): string {
    return `${this.prefix} ${name}`;
  }

  reset = (): void => {
    this.logger.clear();
  };
}

export interface Shape {
  area(): number;
}

export type Id = string | number;
"""

GO = """\
package server

import (
	"fmt"
	"net/http"
)

// Server answers HTTP requests.
type Server struct {
	addr string
}

// Handler handles one route.
type Handler interface {
	Serve(w http.ResponseWriter, r *http.Request)
}

// NewServer makes a server.
func NewServer(addr string) *Server {
	return &Server{addr: addr}
}

// Start listens on the address.
func (s *Server) Start() error {
	fmt.Println("listening on", s.addr)
	return http.ListenAndServe(s.addr, nil)
}

var defaultServer = NewServer(":8080")
"""


Row = tuple[int, int, str, str, str]


def table(chunks: list[CodeChunkDraft]) -> list[Row]:
    return [(c.start_line, c.end_line, c.chunk_type, c.name, c.parent_scope) for c in chunks]


def covered_lines(chunks: list[CodeChunkDraft]) -> set[int]:
    return {n for c in chunks for n in range(c.start_line, c.end_line + 1)}


def meaningful_lines(text: str) -> set[int]:
    """Lines that must be in some chunk: all but blanks and lone closing brackets."""
    closers = set("{}()[];, \t")
    return {
        n
        for n, line in enumerate(text.split("\n"), start=1)
        if line.strip() and not set(line) <= closers and line.strip() != "end"
    }


@pytest.mark.parametrize("language", ["python", "rust", "typescript", "tsx", "javascript", "go"])
def test_core_grammars_are_installed_offline(language: str) -> None:
    assert has_grammar(language)
    assert supports_syntax_chunking(language)


def test_python_chunks() -> None:
    chunks = chunk_file(PYTHON, "python", "src/auth.py")
    module = "module src/auth.py"
    assert table(chunks) == [
        (1, 4, "module", "auth.py", module),
        (7, 9, "function", "hash_password", module),
        (12, 15, "class", "Auth", module),
        (17, 18, "method", "__init__", "class Auth"),
        (20, 23, "method", "verify", "class Auth"),  # comment and decorator stay with it
        (25, 25, "class", "Token", "class Auth"),
        (26, 27, "method", "refresh", "class Auth > class Token"),
        (30, 31, "module", "auth.py", module),
    ]
    verify = chunks[4]
    assert verify.content == (
        "# file: src/auth.py\n"
        "# scope: class Auth\n"
        "    # Compare in constant time.\n"
        "    @staticmethod\n"
        "    def verify(user, password):\n"
        "        return user.hash == hash_password(password)"
    )
    assert verify.source == "\n".join(PYTHON.split("\n")[19:23])
    assert verify.content_hash == hashlib.sha256(verify.content.encode()).hexdigest()
    assert verify.language == "python"
    assert verify.file_path == "src/auth.py"
    # top-level chunks name only their file
    assert chunks[1].content.startswith("# file: src/auth.py\ndef hash_password(")


def test_rust_chunks() -> None:
    chunks = chunk_file(RUST, "rust", "src/parser.rs")
    module = "module src/parser.rs"
    assert table(chunks) == [
        (1, 1, "module", "parser.rs", module),
        (3, 8, "struct", "Parser", module),  # doc comment and #[derive] included
        (10, 10, "impl", "Parser", module),
        (11, 14, "method", "new", "impl Parser"),
        (16, 18, "method", "peek", "impl Parser"),
        (21, 21, "impl", "fmt::Display for Parser", module),
        (22, 24, "method", "fmt", "impl fmt::Display for Parser"),
        (27, 29, "trait", "Visitor", module),
        (31, 34, "enum", "Token", module),
        (36, 38, "module", "tests", module),
        (40, 43, "function", "parses_empty", "mod tests"),
    ]
    assert chunks[3].content.startswith("// file: src/parser.rs\n// scope: impl Parser\n")


def test_typescript_chunks() -> None:
    chunks = chunk_file(TYPESCRIPT, "typescript", "web/greeter.ts")
    module = "module web/greeter.ts"
    assert table(chunks) == [
        (1, 1, "module", "greeter.ts", module),
        (3, 6, "function", "greet", module),
        (8, 10, "function", "shout", module),  # arrow function held by a const
        (12, 12, "module", "greeter.ts", module),
        (14, 16, "class", "Greeter", module),  # decorator, header and field
        (18, 20, "method", "constructor", "class Greeter"),
        (22, 26, "method", "hello", "class Greeter"),
        (28, 30, "method", "reset", "class Greeter"),
        (33, 35, "interface", "Shape", module),
        (37, 37, "type", "Id", module),
    ]
    assert chunk_file(TYPESCRIPT, "tsx", "web/greeter.tsx")[4].name == "Greeter"


def test_go_chunks() -> None:
    chunks = chunk_file(GO, "go", "server/server.go")
    module = "module server/server.go"
    assert table(chunks) == [
        (1, 5, "module", "server.go", module),
        (8, 11, "struct", "Server", module),
        (13, 16, "interface", "Handler", module),
        (18, 21, "function", "NewServer", module),
        (23, 27, "method", "Start", "type Server"),  # the receiver is its scope
        (29, 29, "module", "server.go", module),
    ]


@pytest.mark.parametrize(
    ("text", "language"),
    [(PYTHON, "python"), (RUST, "rust"), (TYPESCRIPT, "typescript"), (GO, "go")],
)
def test_no_line_is_lost(text: str, language: str) -> None:
    chunks = chunk_file(text, language, "f")
    assert meaningful_lines(text) <= covered_lines(chunks)
    lines = text.split("\n")
    for chunk in chunks:
        assert chunk.source == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert chunk.content.endswith(chunk.source)
        assert chunk.chunk_type in CHUNK_TYPES


def test_huge_function_is_split_into_windows_that_keep_its_signature() -> None:
    body = [f"        total += {i}" for i in range(200)]
    signature = ["class Ledger:", "    def sum_all(self, rows,", "                strict=False):"]
    text = "\n".join([*signature, *body, "        return total", ""])
    chunks = chunk_file(text, "python", "ledger.py", max_chunk_lines=120, window=60, overlap=10)
    parts = chunks[1:]
    assert [(c.start_line, c.end_line) for c in parts] == [
        (2, 61),
        (52, 111),
        (102, 161),
        (152, 204),
    ]
    assert {(c.chunk_type, c.name, c.parent_scope) for c in parts} == {
        ("method", "sum_all", "class Ledger")
    }
    for number, chunk in enumerate(parts, start=1):
        header = f"# file: ledger.py\n# scope: class Ledger\n# part {number} of 4\n"
        assert chunk.content.startswith(header)
        assert "def sum_all(self, rows,\n                strict=False):" in chunk.content
    assert parts[2].content.startswith(
        header.replace("4 of 4", "3 of 4")
        + "    def sum_all(self, rows,\n                strict=False):\n# ...\n        total += 98"
    )


def test_unknown_language_falls_back_to_overlapping_windows() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 151)) + "\n"
    chunks = chunk_file(
        text, "cobol", "legacy/PAYROLL.cbl", max_chunk_lines=50, window=40, overlap=5
    )
    assert table(chunks) == [
        (1, 40, "window", "PAYROLL.cbl", "module legacy/PAYROLL.cbl"),
        (36, 75, "window", "PAYROLL.cbl", "module legacy/PAYROLL.cbl"),
        (71, 110, "window", "PAYROLL.cbl", "module legacy/PAYROLL.cbl"),
        (106, 150, "window", "PAYROLL.cbl", "module legacy/PAYROLL.cbl"),
    ]
    assert chunks[1].content.startswith("// file: legacy/PAYROLL.cbl\n// part 2 of 4\nline 36\n")
    small = chunk_file("# Title\n\nSome text.\n", "markdown", "README.md")
    assert table(small) == [(1, 3, "window", "README.md", "module README.md")]


def test_syntax_errors_still_cover_the_file() -> None:
    text = "def ok():\n    return 1\n\ndef broken(:\n    pass\n\nclass K:\n    def m(self): ...\n"
    chunks = chunk_file(text, "python", "bad.py")
    assert meaningful_lines(text) <= covered_lines(chunks)
    assert ("function", "ok") in {(c.chunk_type, c.name) for c in chunks}


def test_empty_and_blank_files_give_no_chunks() -> None:
    assert chunk_file("", "python", "a.py") == []
    assert chunk_file("\n\n   \n", "rust", "a.rs") == []


@pytest.mark.parametrize(
    ("window", "overlap", "message"),
    [(0, 0, "window"), (200, 0, "window"), (60, 60, "overlap"), (60, -1, "overlap")],
)
def test_invalid_window_sizes(window: int, overlap: int, message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        chunk_file("x = 1\n", "python", "a.py", max_chunk_lines=120, window=window, overlap=overlap)


# Smaller checks for the other languages with a spec: the definitions and their scopes.
OTHER_LANGUAGES = [
    (
        "java",
        "package a;\n/** Doc. */\npublic class Foo {\n  private int x;\n"
        '  public Foo() {}\n  @Override\n  public String toString() { return ""; }\n}\n',
        [
            ("module", "X", "module X"),
            ("class", "Foo", "module X"),
            ("method", "Foo", "class Foo"),
            ("method", "toString", "class Foo"),
        ],
    ),
    (
        "cpp",
        "namespace ns {\nclass Foo {\n public:\n  int x;\n  void m() {}\n};\n"
        "int Foo::h(int a) { return a; }\n}\n",
        [
            ("module", "ns", "module X"),
            ("class", "Foo", "namespace ns"),
            ("method", "m", "namespace ns > class Foo"),
            ("function", "Foo::h", "namespace ns"),
        ],
    ),
    (
        "c",
        "/* doc */\nstatic int *make(int a) {\n  return 0;\n}\nstruct P { int x; };\n",
        [("function", "make", "module X"), ("struct", "P", "module X")],
    ),
    (
        "c_sharp",
        "namespace N {\n  public class C {\n    int f;\n    public void M() {}\n  }\n}\n",
        [
            ("module", "N", "module X"),
            ("class", "C", "namespace N"),
            ("method", "M", "namespace N > class C"),
        ],
    ),
    (
        "ruby",
        "module Auth\n  # A user.\n  class User\n    def initialize(name)\n"
        "      @name = name\n    end\n  end\nend\n",
        [
            ("module", "Auth", "module X"),
            ("class", "User", "module Auth"),
            ("method", "initialize", "module Auth > class User"),
        ],
    ),
    (
        "php",
        "<?php\nclass K {\n  private $x;\n  public function m($a) { return 1; }\n}\n"
        "function f() {}\n",
        [
            ("module", "X", "module X"),
            ("class", "K", "module X"),
            ("method", "m", "class K"),
            ("function", "f", "module X"),
        ],
    ),
    (
        "javascript",
        "const a = require('a');\nfunction f() {}\nconst g = async () => 1;\n"
        "class K {\n  m() {}\n}\n",
        [
            ("module", "X", "module X"),
            ("function", "f", "module X"),
            ("function", "g", "module X"),
            ("class", "K", "module X"),
            ("method", "m", "class K"),
        ],
    ),
    (
        "bash",
        "#!/bin/sh\nset -e\n\ndeploy() {\n  echo hi\n}\n",
        [("module", "X", "module X"), ("function", "deploy", "module X")],
    ),
]


@pytest.mark.parametrize(
    ("language", "text", "expected"), OTHER_LANGUAGES, ids=[case[0] for case in OTHER_LANGUAGES]
)
def test_other_languages(language: str, text: str, expected: list[tuple[str, str, str]]) -> None:
    if not supports_syntax_chunking(language):
        pytest.skip(f"no {language} grammar installed")
    chunks = chunk_file(text, language, "X")
    assert [(c.chunk_type, c.name, c.parent_scope) for c in chunks] == expected
    assert meaningful_lines(text) <= covered_lines(chunks)

"""What the statement of a binlog QUERY event does, as Debezium's binlog connectors decide it
(``BinlogStreamingChangeEventSource.handleQueryEvent`` and ``BinlogDatabaseSchema.parseDdl``):
:func:`classify` gives its :class:`Statement`, the kind of change and the tables it touches.

A small tokenizer, not a SQL parser. This connector takes tables' structure from the binlog's
own column metadata and from ``information_schema`` read after each DDL (the plan's decision),
so of a statement it needs only what Debezium's grammar decides before building tables: is it
filtered out (Debezium's default ``schema.history.internal.ddl.filter``, XA, transaction
control), is it DML of statement-based replication, and otherwise which tables and databases
it creates, alters, renames, drops or truncates. That is in the statement's first words and
its table names, which a tokenizer finds reliably once it knows MySQL's lexical rules:
comments (``/* */``, ``-- ``, ``#``), executable comments (``/*!50100 ... */``, ``/*M!...*/``,
whose text counts), backtick-quoted identifiers (with doubled backticks), strings (with
backslash escapes and doubled quotes), and ``db.table`` qualification. Column definitions,
expressions and options are skipped without being understood; a full grammar (Debezium's is
ANTLR's MySQL grammar, thousands of rules) would give nothing more here.

Deliberate differences from Debezium:

* Comments and executable comments are handled before the ``ddl.filter`` regexes are
  applied (they are matched against the statement as written and against its tokens joined
  as written, comments left out, executable comments unwrapped), so ``/* app */ GRANT ...``
  and mysqldump's ``/*!50001 CREATE ALGORITHM=UNDEFINED */ /*!50013 DEFINER=... */ /*!50001
  VIEW ...*/`` are filtered like their plain forms; Debezium filters only the plain forms.
* ``SET STATEMENT ... FOR`` is removed by tokens up to the first ``FOR`` outside
  parentheses (Debezium's greedy regex ``SET STATEMENT .* FOR`` can run on to a later
  ``FOR``, as in ``FOREIGN KEY ... FOR``).
* DML also covers ``LOAD DATA``/``LOAD XML`` and ``WITH ... UPDATE/DELETE`` (Debezium's
  prefixes are ``INSERT``, ``UPDATE``, ``DELETE``, ``REPLACE``); statements on ``TEMPORARY``
  tables, transaction control (``BEGIN``, ``COMMIT``, ``ROLLBACK``, savepoints) and
  ``SET PASSWORD`` are ignored (a temporary table never has row events, is not in
  ``information_schema.COLUMNS``, and a password statement is not sent to a topic).
* ``CREATE INDEX`` and ``DROP INDEX`` are ``alter-table`` of their table. Debezium emits an
  ``ALTER`` change only for a ``UNIQUE`` index on a table without a primary key (it may
  become the key) and a database-level event without table changes otherwise; the caller
  decides from the table's key before and after.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The kinds of Statement.
CREATE_TABLE = "create-table"
ALTER_TABLE = "alter-table"
DROP_TABLE = "drop-table"
RENAME_TABLE = "rename-table"
TRUNCATE = "truncate"
CREATE_DATABASE = "create-database"
DROP_DATABASE = "drop-database"
ALTER_DATABASE = "alter-database"
IGNORED = "ignored"
DML = "dml"
OTHER = "other"


@dataclass(frozen=True)
class Statement:
    """What a QUERY event's statement does.

    * ``kind``: ``create-table``, ``alter-table``, ``drop-table``, ``rename-table``
      (``RENAME TABLE`` and ``ALTER TABLE ... RENAME``), ``truncate``, ``create-database``,
      ``drop-database``, ``alter-database``; ``ignored`` (Debezium drops it: ``ddl.filter``,
      XA, transaction control, temporary tables, comment-only text); ``dml`` (statement-based
      replication's DML, which Debezium logs a warning for and ignores); ``other`` (any other
      statement, which Debezium records as a database-level schema change without table
      changes: ``CREATE EVENT``, ``CREATE SEQUENCE``, ``FLUSH TABLES``, ...).
    * ``tables``: the ``(db, table)`` pairs touched, in statement order, ``db`` the
      statement's qualifier or else the event's default database (``""`` without one); a
      rename lists each pair as old then new. Names are as written, unquoted.
    * ``database``: the database named by a database statement (for ``ALTER DATABASE``
      without a name, the default), else the event's default database.
    * ``ddls``: the ``ddl`` of each schema-change event Debezium writes for the statement,
      in order: one per table for ``DROP TABLE`` (``DROP TABLE `db`.`t```), one per pair for
      ``RENAME TABLE`` (``RENAME TABLE a TO b``), else the statement itself; empty for
      ``ignored``, ``dml`` and ``truncate``.
    """

    kind: str
    tables: tuple[tuple[str, str], ...] = ()
    database: str | None = None
    ddls: tuple[str, ...] = ()


# Debezium's default schema.history.internal.ddl.filter (SchemaHistory.DDL_FILTER), verbatim:
# a statement matching one in full (case-insensitive, '.' matching newlines) is ignored.
DDL_FILTER: tuple[str, ...] = (
    r"DROP TEMPORARY TABLE IF EXISTS .+ /\* generated by server \*/",
    r"(SET STATEMENT .*)?INSERT INTO (mysql\.)?rds_heartbeat2\(.*\) values \(.*\) ON DUPLICATE KEY UPDATE value = .*",
    r"(SET STATEMENT .*)?DELETE FROM (mysql\.)?rds_sysinfo.*",
    r"(SET STATEMENT .*)?INSERT INTO (mysql\.)?rds_sysinfo\(.*\) values \(.*\)",
    r"(SET STATEMENT .*)?INSERT INTO (mysql\.)?rds_monitor\(.*\) values \(.*\) ON DUPLICATE KEY UPDATE value = .*",
    r"(SET STATEMENT .*)?INSERT INTO (mysql\.)?rds_monitor\(.*\) values \(.*\)",
    r"(SET STATEMENT .*)?DELETE FROM (mysql\.)?rds_monitor.*",
    r"FLUSH RELAY LOGS.*",
    r"flush relay logs.*",
    r"SAVEPOINT .*",
    r"^\s*#\s*Dummy event.*",
    r"(SET STATEMENT .*)?TRUNCATE TABLE .*",
    r"(SET STATEMENT .*)?REPLACE INTO .*",
    r"^(?:SET STATEMENT\s+.*?FOR\s+)?(?:GRANT|REVOKE)\s+.*",
    r"^(?:SET STATEMENT\s+.*?FOR\s+)?(?:ANALYZE|OPTIMIZE|REPAIR)\s+"
    r"(?:NO_WRITE_TO_BINLOG\s+|LOCAL\s+)?TABLE\s+.*",
    r"^(?:SET STATEMENT\s+.*?FOR\s+)?(CREATE|ALTER|DROP)\s+(?:OR\s+REPLACE\s+)?"
    r"(?:IF\s+(?:NOT\s+)?EXISTS\s+)?(USER|ROLE)\b.*",
    r"^(?:SET STATEMENT\s+.*?FOR\s+)?(CREATE|ALTER|DROP)\s+(?:OR\s+REPLACE\s+)?"
    r"(?:ALGORITHM\s*=\s*[^\s]+\s+)?(?:DEFINER\s*=\s*[^\s]+\s+)?(?:SQL\s+SECURITY\s+[^\s]+\s+)?"
    r"(VIEW|FUNCTION|PROCEDURE|TRIGGER)\s+.*",
)
_FILTERS = tuple(re.compile(p, re.IGNORECASE | re.DOTALL) for p in DDL_FILTER)


def filtered(sql: str) -> bool:
    """Whether Debezium's default ``ddl.filter`` ignores ``sql`` (a full match of one of
    :data:`DDL_FILTER`; leading and trailing whitespace removed as Debezium removes it)."""
    text = sql.strip()
    return any(f.fullmatch(text) for f in _FILTERS)


# -- tokens --------------------------------------------------------------------------------------
_WORD, _QUOTED, _STRING, _PUNCT = "word", "quoted", "string", "punct"


@dataclass(frozen=True)
class _Token:
    kind: str  # _WORD, _QUOTED (`identifier`), _STRING ('...' or "..."), _PUNCT
    value: str  # the word upper case, the identifier or string unquoted, the character
    text: str  # as written
    start: int
    end: int
    quote: str = ""  # the string's quote character


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_$" or ord(ch) >= 0x80


def _tokens(sql: str) -> list[_Token]:
    """The tokens of ``sql``: comments left out, executable comments' text kept."""
    tokens: list[_Token] = []
    i, n = 0, len(sql)
    executable = False  # inside /*! ... */: its closing */ is skipped
    while i < n:
        ch = sql[i]
        if ch.isspace():
            i += 1
        elif ch == "#" or (
            sql.startswith("--", i) and (i + 2 == n or sql[i + 2].isspace() or sql[i + 2] < " ")
        ):
            end = sql.find("\n", i)
            i = n if end < 0 else end + 1
        elif sql.startswith("/*!", i) or sql.startswith("/*M!", i):
            i += 3 if sql[i + 2] == "!" else 4
            while i < n and sql[i].isdigit():
                i += 1
            executable = True
        elif executable and sql.startswith("*/", i):
            executable = False
            i += 2
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif ch == "`":
            value, i2 = _quoted(sql, i, "`", backslash=False)
            tokens.append(_Token(_QUOTED, value, sql[i:i2], i, i2))
            i = i2
        elif ch in "'\"":
            value, i2 = _quoted(sql, i, ch, backslash=True)
            tokens.append(_Token(_STRING, value, sql[i:i2], i, i2, ch))
            i = i2
        elif _is_word_char(ch):
            j = i + 1
            while j < n and _is_word_char(sql[j]):
                j += 1
            tokens.append(_Token(_WORD, sql[i:j].upper(), sql[i:j], i, j))
            i = j
        else:
            tokens.append(_Token(_PUNCT, ch, ch, i, i + 1))
            i += 1
    return tokens


def _quoted(sql: str, start: int, quote: str, *, backslash: bool) -> tuple[str, int]:
    """The unquoted value of the quoted text at ``start`` and the index after it: the quote
    doubled inside stands for itself, as does (in strings) any character after a
    backslash. An unclosed quote runs to the end."""
    out: list[str] = []
    i, n = start + 1, len(sql)
    while i < n:
        ch = sql[i]
        if backslash and ch == "\\" and i + 1 < n:
            out.append(sql[i + 1])
            i += 2
        elif ch == quote:
            if i + 1 < n and sql[i + 1] == quote:
                out.append(quote)
                i += 2
            else:
                return "".join(out), i + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out), n


def _joined(tokens: list[_Token]) -> str:
    """The tokens' text as written, one space wherever whitespace or a comment separated
    them."""
    parts: list[str] = []
    for index, token in enumerate(tokens):
        if index and token.start != tokens[index - 1].end:
            parts.append(" ")
        parts.append(token.text)
    return "".join(parts)


# -- classification ------------------------------------------------------------------------------
_DML_HEADS = frozenset(("INSERT", "UPDATE", "DELETE", "REPLACE", "LOAD", "WITH"))
_TRANSACTION_HEADS = frozenset(("BEGIN", "COMMIT", "ROLLBACK", "END", "SAVEPOINT", "RELEASE"))
# Words that may follow ALTER DATABASE where its name is left out.
_ALTER_DATABASE_OPTIONS = frozenset(
    ("DEFAULT", "CHARACTER", "CHARSET", "COLLATE", "COMMENT", "ENCRYPTION", "READ", "UPGRADE")
)


def classify(sql: str, default_db: str | None) -> Statement:
    """What the statement ``sql`` of a QUERY event whose default database is ``default_db``
    does (:class:`Statement`), in Debezium's order: ``TRUNCATE`` is never filtered; a match
    of :data:`DDL_FILTER` is ``ignored``; after a leading ``SET STATEMENT ... FOR``, ``XA``
    and transaction control are ``ignored``, DML is ``dml``; then the statement's kind and
    tables.

    The caller handles ``BEGIN``, ``COMMIT`` (transaction boundaries) and Debezium's
    ``ROLLBACK`` warning before classifying; here they are ``ignored``."""
    tokens = _tokens(sql)
    if not tokens:
        return Statement(IGNORED, database=default_db)
    body = _without_set_statement(tokens)
    if not body:
        return Statement(OTHER, database=default_db, ddls=(sql,))
    head = _word(body[0])
    if head != "TRUNCATE" and (filtered(sql) or filtered(_joined(tokens))):
        return Statement(IGNORED, database=default_db)
    if head == "XA" or _words(body, 0, 2) == ["FLUSH", "PRIVILEGES"]:
        return Statement(IGNORED, database=default_db)
    if head in _DML_HEADS:
        return Statement(DML, database=default_db)
    if head in _TRANSACTION_HEADS or _words(body, 0, 2) == ["SET", "PASSWORD"]:
        return Statement(IGNORED, database=default_db)
    return _Classifier(sql, body, default_db).statement()


def _word(token: _Token) -> str | None:
    """The token's word, upper case, or None when it is not a word."""
    return token.value if token.kind == _WORD else None


def _words(tokens: list[_Token], start: int, stop: int) -> list[str | None]:
    return [_word(t) for t in tokens[start:stop]]


def _without_set_statement(tokens: list[_Token]) -> list[_Token]:
    """The tokens after a leading ``SET STATEMENT <variables> FOR`` (MariaDB), all of them
    without one; none when it has no ``FOR``."""
    if _words(tokens, 0, 2) != ["SET", "STATEMENT"]:
        return tokens
    depth = 0
    for index in range(2, len(tokens)):
        token = tokens[index]
        if token.kind == _PUNCT and token.value in "()":
            depth += 1 if token.value == "(" else -1
        elif depth == 0 and _word(token) == "FOR":
            return tokens[index + 1 :]
    return []


class _Classifier:
    """The kind and tables of one statement's tokens (after ``SET STATEMENT``)."""

    def __init__(self, sql: str, tokens: list[_Token], default_db: str | None) -> None:
        self.sql = sql
        self.tokens = tokens
        self.default_db = default_db
        self.at = 0

    # -- token helpers
    def peek(self, ahead: int = 0) -> _Token | None:
        index = self.at + ahead
        return self.tokens[index] if index < len(self.tokens) else None

    def accept(self, *words: str) -> bool:
        """Moves past ``words`` when the next tokens are they."""
        for offset, word in enumerate(words):
            token = self.peek(offset)
            if token is None or _word(token) != word:
                return False
        self.at += len(words)
        return True

    def accept_any(self, *words: str) -> str | None:
        token = self.peek()
        if token is not None and _word(token) in words:
            self.at += 1
            return token.value
        return None

    def skip_wait(self) -> None:
        """Moves past MariaDB's ``WAIT n`` or ``NOWAIT``."""
        if self.accept("NOWAIT"):
            return
        if self.accept("WAIT"):
            self.at += 1

    def name_part(self) -> str | None:
        token = self.peek()
        if token is None:
            return None
        if token.kind in (_WORD, _QUOTED) or (token.kind == _STRING and token.quote == '"'):
            self.at += 1
            return token.text if token.kind == _WORD else token.value
        return None

    def table_name(self) -> tuple[str, str] | None:
        """A ``[db.]table`` name (backticks, or double quotes as ANSI_QUOTES has them)."""
        first = self.name_part()
        if first is None:
            return None
        dot = self.peek()
        if dot is not None and dot.kind == _PUNCT and dot.value == ".":
            self.at += 1
            second = self.name_part()
            if second is not None:
                return first, second
        return self.default_db or "", first

    def punct(self, char: str) -> bool:
        token = self.peek()
        if token is not None and token.kind == _PUNCT and token.value == char:
            self.at += 1
            return True
        return False

    # -- statements
    def statement(self) -> Statement:
        head = self.accept_any("CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE")
        if head == "CREATE":
            return self.create()
        if head == "ALTER":
            return self.alter()
        if head == "DROP":
            return self.drop()
        if head == "RENAME":
            return self.rename()
        if head == "TRUNCATE":
            self.accept("TABLE")
            table = self.table_name()
            if table is not None:
                return Statement(TRUNCATE, (table,), self.default_db)
        return self.other()

    def other(self) -> Statement:
        return Statement(OTHER, database=self.default_db, ddls=(self.sql,))

    def whole(self, kind: str, *tables: tuple[str, str]) -> Statement:
        return Statement(kind, tables, self.default_db, (self.sql,))

    def database_statement(self, kind: str) -> Statement:
        name = self.name_part()
        return Statement(kind, (), name, (self.sql,)) if name is not None else self.other()

    def create(self) -> Statement:
        self.accept("OR", "REPLACE")
        temporary = self.accept("TEMPORARY")
        if self.accept("TABLE"):
            self.accept("IF", "NOT", "EXISTS")
            table = self.table_name()
            if table is None:
                return self.other()
            if temporary:
                return Statement(IGNORED, database=self.default_db)
            return self.whole(CREATE_TABLE, table)
        if self.accept_any("DATABASE", "SCHEMA"):
            self.accept("IF", "NOT", "EXISTS")
            return self.database_statement(CREATE_DATABASE)
        self.accept_any("ONLINE", "OFFLINE")
        self.accept_any("UNIQUE", "FULLTEXT", "SPATIAL")
        if self.accept("INDEX"):
            return self.index_on()
        return self.other()

    def index_on(self) -> Statement:
        """The rest of ``CREATE INDEX``/``DROP INDEX``: the table after ``ON``."""
        depth = 0
        while (token := self.peek()) is not None:
            self.at += 1
            if token.kind == _PUNCT and token.value in "()":
                depth += 1 if token.value == "(" else -1
            elif depth == 0 and _word(token) == "ON":
                table = self.table_name()
                return self.whole(ALTER_TABLE, table) if table is not None else self.other()
        return self.other()

    def alter(self) -> Statement:
        self.accept("ONLINE")
        self.accept("IGNORE")
        if self.accept("TABLE"):
            self.accept("IF", "EXISTS")
            table = self.table_name()
            if table is None:
                return self.other()
            self.skip_wait()
            renamed = self.renamed_to()
            if renamed is not None:
                return self.whole(RENAME_TABLE, table, renamed)
            return self.whole(ALTER_TABLE, table)
        if self.accept_any("DATABASE", "SCHEMA"):
            token = self.peek()
            if token is None or (token.kind == _WORD and token.value in _ALTER_DATABASE_OPTIONS):
                return Statement(ALTER_DATABASE, (), self.default_db, (self.sql,))
            return self.database_statement(ALTER_DATABASE)
        return self.other()

    def renamed_to(self) -> tuple[str, str] | None:
        """The new name of an ``ALTER TABLE`` with ``RENAME [TO|AS] name`` among its
        clauses (not ``RENAME COLUMN``/``INDEX``/``KEY``), None without one."""
        depth = 0
        while (token := self.peek()) is not None:
            self.at += 1
            if token.kind == _PUNCT and token.value in "()":
                depth += 1 if token.value == "(" else -1
            elif depth == 0 and _word(token) == "RENAME":
                if self.accept_any("COLUMN", "INDEX", "KEY", "CONSTRAINT"):
                    continue
                self.accept_any("TO", "AS")
                return self.table_name()
        return None

    def drop(self) -> Statement:
        temporary = self.accept("TEMPORARY")
        if self.accept_any("TABLE", "TABLES"):
            return self.drop_tables(temporary)
        if self.accept_any("DATABASE", "SCHEMA"):
            self.accept("IF", "EXISTS")
            return self.database_statement(DROP_DATABASE)
        self.accept_any("ONLINE", "OFFLINE")
        if self.accept("INDEX"):
            return self.index_on()
        return self.other()

    def drop_tables(self, temporary: bool) -> Statement:
        """``DROP TABLE [IF EXISTS] a, b [WAIT n|NOWAIT] [RESTRICT|CASCADE]``: one event per
        table, ``DROP TABLE [IF EXISTS] `db`.`t` [RESTRICT|CASCADE]``
        (``DropTableParserListener``)."""
        self.accept("IF", "EXISTS")
        first = self.peek()
        tables: list[tuple[str, str]] = []
        while (table := self.table_name()) is not None:
            tables.append(table)
            if not self.punct(","):
                break
        if first is None or not tables:
            return self.other()
        if temporary:
            return Statement(IGNORED, database=self.default_db)
        self.skip_wait()
        suffix = self.accept_any("RESTRICT", "CASCADE")
        prefix = self.sql[self.tokens[0].start : first.start]
        ddls = tuple(
            prefix + _backticked(db, table) + (f" {suffix}" if suffix else "")
            for db, table in tables
        )
        return Statement(DROP_TABLE, tuple(tables), self.default_db, ddls)

    def rename(self) -> Statement:
        """``RENAME TABLE [IF EXISTS] a [WAIT n|NOWAIT] TO b, c TO d``: one event per pair,
        ``RENAME TABLE a TO b`` as written."""
        if not self.accept_any("TABLE", "TABLES"):
            return self.other()
        self.accept("IF", "EXISTS")
        tables: list[tuple[str, str]] = []
        ddls: list[str] = []
        while (start := self.peek()) is not None:
            old = self.table_name()
            self.skip_wait()
            if old is None or not self.accept_any("TO", "AS"):
                return self.other()
            new = self.table_name()
            end = self.tokens[self.at - 1]
            if new is None:
                return self.other()
            tables += (old, new)
            ddls.append("RENAME TABLE " + self.sql[start.start : end.end])
            if not self.punct(","):
                break
        if not tables:
            return self.other()
        return Statement(RENAME_TABLE, tuple(tables), self.default_db, tuple(ddls))


def _backticked(db: str, table: str) -> str:
    """``TableId.toQuotedString('`')``: each part in backticks (backticks inside doubled),
    an empty database left out."""
    parts = [db, table] if db else [table]
    return ".".join("`" + p.replace("`", "``") + "`" for p in parts)

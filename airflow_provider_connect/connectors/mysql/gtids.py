"""GTID sets as the task keeps them in its offsets: the set of the transactions handled
before the current one, grown at each commit; and the GTID source filter
(``gtid.source.includes``/``excludes``).

MariaDB's GTIDs are ``domain-server-sequence``; its set (``gtid_binlog_pos``, what a replica
connects with as ``@slave_connect_state``) holds the last GTID of each domain, comma-separated
in domain order. MySQL's are ``uuid:number``, its sets ranges per server UUID
(``uuid:1-5:7-9``), grown with mysql-replication's ``GtidSet``."""

from __future__ import annotations

import re
from collections.abc import Sequence


def mariadb_added(gtids: str | None, gtid: str) -> str:
    """The MariaDB set ``gtids`` with ``gtid`` the last of its domain."""
    domains = {g.split("-", 1)[0]: g for g in (gtids or "").split(",") if g.strip()}
    domains[gtid.split("-", 1)[0]] = gtid
    return ",".join(domains[d] for d in sorted(domains, key=int))


def mysql_added(gtids: str | None, gtid: str) -> str:
    """The MySQL set ``gtids`` with ``gtid`` added."""
    from pymysqlreplication.gtid import Gtid, GtidSet

    known, added = GtidSet(gtids or ""), Gtid(gtid)
    if added in known:  # a transaction read again
        return gtids or ""
    return str(known + added).replace("\n", "")


def source_of(gtid: str, mariadb: bool) -> str:
    """What the GTID source filter matches: MariaDB's ``domain-server``, MySQL's server
    UUID."""
    if mariadb:
        domain, server, _ = gtid.split("-", 2)
        return f"{domain}-{server}"
    return gtid.split(":", 1)[0]


class GtidFilter:
    """Whether a transaction's GTID source is captured (``gtid.source.includes`` wins over
    ``gtid.source.excludes``; both are regular expressions matching the whole source, in any
    case)."""

    def __init__(self, includes: Sequence[str], excludes: Sequence[str], mariadb: bool) -> None:
        self.includes = [re.compile(p, re.IGNORECASE) for p in includes]
        self.excludes = [re.compile(p, re.IGNORECASE) for p in excludes]
        self.mariadb = mariadb

    def captured(self, gtid: str | None) -> bool:
        if gtid is None or not (self.includes or self.excludes):
            return True
        source = source_of(gtid, self.mariadb)
        if self.includes:
            return any(p.fullmatch(source) for p in self.includes)
        return not any(p.fullmatch(source) for p in self.excludes)

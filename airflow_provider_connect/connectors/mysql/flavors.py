"""What differs between Debezium's MySQL and MariaDB connectors, which otherwise share one
binlog connector (``debezium-connector-binlog``): the names in their records, their SSL and
snapshot-locking modes, how the server states its position and GTIDs."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Flavor:
    """One of the two databases of the MySQL family."""

    name: str
    """``source.connector`` (``Module.name()``): ``mysql`` or ``mariadb``."""
    ssl_modes: tuple[str, ...]
    """``database.ssl.mode``'s values, the default first."""
    locking_modes: tuple[str, ...]
    """``snapshot.locking.mode``'s values this connector runs, the default first."""

    @property
    def mariadb(self) -> bool:
        return self.name == "mariadb"

    @property
    def package(self) -> str:
        """The Java package naming the connector's schemas (``io.debezium.connector.<db>``)."""
        return f"io.debezium.connector.{self.name}"

    @property
    def source_schema_name(self) -> str:
        return f"{self.package}.Source"


MYSQL = Flavor(
    name="mysql",
    ssl_modes=("preferred", "disabled", "required", "verify_ca", "verify_identity"),
    locking_modes=("minimal", "extended", "none"),
)
MARIADB = Flavor(
    name="mariadb",
    ssl_modes=("disable", "trust", "verify-ca", "verify-full"),
    locking_modes=("minimal", "extended", "none"),
)

#!/bin/sh
# Creates or upgrades Temporal's two PostgreSQL databases (run in temporalio/admin-tools).
# Safe to run again: existing databases are kept and only newer schema versions are applied.
set -eu
: "${POSTGRES_SEEDS:=postgresql}" "${DB_PORT:=5432}" "${POSTGRES_USER:=temporal}"
export SQL_PASSWORD="${POSTGRES_PWD:?POSTGRES_PWD is not set}"
schema=/etc/temporal/schema/postgresql/v12

sql() {
    temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@"
}

for db in temporal temporal_visibility; do
    case $db in
        temporal) dir=$schema/temporal/versioned ;;
        *) dir=$schema/visibility/versioned ;;
    esac
    sql --db "$db" create
    sql --db "$db" setup-schema -v 0.0
    sql --db "$db" update-schema -d "$dir"
done
echo "Temporal schema in PostgreSQL is up to date"

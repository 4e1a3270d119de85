#!/usr/bin/env bash
# Starts the Debian PostgreSQL cluster and makes sure the test role exists (idempotent).
# Tests then use postgres://doorbell:doorbell@127.0.0.1:5432/postgres and create their own databases.
set -euo pipefail
version="$(ls /usr/lib/postgresql | sort -n | tail -1)"
if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -q "^${version} main$"; then
  pg_createcluster "$version" main
fi
pg_ctlcluster "$version" main start 2>/dev/null || true
for _ in $(seq 1 30); do
  pg_isready -q -h 127.0.0.1 -p 5432 && break
  sleep 1
done
pg_isready -h 127.0.0.1 -p 5432
su postgres -c "psql -q -tc \"select 1 from pg_roles where rolname = 'doorbell'\"" | grep -q 1 ||
  su postgres -c "psql -q -c \"create role doorbell login password 'doorbell' superuser\""

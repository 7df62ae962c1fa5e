-- Grafana's read-only login to the warehouse. docker-compose.yml runs it (service grafana-reader,
-- as the warehouse owner) on every `up` before Grafana starts; it is idempotent, needs no
-- migration, and brings the password and the grants up to date. Its settings come as session
-- options, so that this file holds no password (compose: PGOPTIONS="-c apm_sync.reader_role=...
-- -c apm_sync.reader_password=... -c apm_sync.schema=..."; by hand: SET each, then \i this file):
--   apm_sync.reader_role      the login Grafana uses
--   apm_sync.reader_password  its password
--   apm_sync.schema           the warehouse schema (APM_DB_SCHEMA, default apm)
-- Run it as the role that runs apm-sync (its migrations create the tables): the default
-- privileges below cover the tables, views and monthly partitions that role creates later.
DO $$
DECLARE
  reader text := current_setting('apm_sync.reader_role');
  secret text := current_setting('apm_sync.reader_password');
  warehouse text := current_setting('apm_sync.schema');
BEGIN
  IF secret = '' THEN
    RAISE EXCEPTION 'apm_sync.reader_password is empty: set GRAFANA_DB_PASSWORD';
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = reader) THEN
    EXECUTE format('CREATE ROLE %I', reader);
  END IF;
  -- A login that may read, and nothing else.
  EXECUTE format('ALTER ROLE %I WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD %L', reader, secret);
  EXECUTE format('ALTER ROLE %I SET default_transaction_read_only = on', reader);
  EXECUTE format('ALTER ROLE %I SET search_path = %I', reader, warehouse);
  -- apm-sync creates the schema when it first migrates; when Grafana comes first, the owner creates it here.
  EXECUTE format('CREATE SCHEMA IF NOT EXISTS %I', warehouse);
  EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), reader);
  EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', warehouse, reader);
  EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO %I', warehouse, reader);
  EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA %I GRANT SELECT ON TABLES TO %I', current_user, warehouse, reader);
END
$$;

"""The placement database: tables, engines, transactions, migrations."""

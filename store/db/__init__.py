"""The database: where it lives and who owns it, migrations, tenants, transactions' locks, the
clock, read snapshots, cursors and argument checks."""

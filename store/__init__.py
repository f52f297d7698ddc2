"""The temporal fact store: schema, migrations, the write path and exact reads."""

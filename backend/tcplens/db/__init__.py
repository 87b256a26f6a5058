"""PostgreSQL access: SQLAlchemy 2.0 models, the engine, migrations and the embedded server."""

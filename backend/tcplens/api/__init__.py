"""HTTP only: routers, dependencies and schemas. Business rules live in ``tcplens.services``."""

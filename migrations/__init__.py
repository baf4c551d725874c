"""The schema: numbered NNNN_name.sql files, applied in order by bot/store/migrate.py.

A package so that a wheel installs the .sql files beside the code (site-packages/migrations/),
where migrate.py finds them the same way as in a checkout: two levels up from bot/store/.
"""

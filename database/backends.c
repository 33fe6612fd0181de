/*
 * backends.c - the table of database backends linked into this build; db.c
 * picks one by URI scheme (db_backend_for_uri). Adding a backend is one line
 * here and one vtable in its folder.
 */
#include "database/db_priv.h"

extern const db_backend_t db_backend_postgresql; /* database/pg/pg_backend.c */

const db_backend_t *const db_backends[] = {
    &db_backend_file,
    &db_backend_postgresql,
    NULL,
};

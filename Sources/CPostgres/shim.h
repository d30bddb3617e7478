#ifndef COUNTERPOINT_CPOSTGRES_SHIM_H
#define COUNTERPOINT_CPOSTGRES_SHIM_H
#include <libpq-fe.h>

/// The diagnostic field codes are character-literal macros ('C', 'M', …), which Swift does
/// not import reliably; these return the fields PostgresError carries.
static inline char *counterpoint_pq_sqlstate(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_SQLSTATE);
}
static inline char *counterpoint_pq_primary_message(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
}
#endif

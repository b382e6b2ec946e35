/* Columns of types tributary does not map (tb_pg_unknown.h). */
#include <stdio.h>
#include <string.h>

#include "connectors/postgres/tb_pg_unknown.h"

enum {
    OID_NAME = 19,
    OID_XML = 142,
    OID_LSEG = 601,
    OID_PATH = 602,
    OID_BOX = 603,
    OID_POLYGON = 604,
    OID_LINE = 628,
    OID_CIRCLE = 718,
    OID_POINT = 600,
    OID_MONEY = 790,
    OID_INTERVAL = 1186,
    OID_VARBIT = 1562,
};

bool tb_pg_array_left_out(uint32_t elem_oid)
{
    return elem_oid == OID_INTERVAL || elem_oid == OID_MONEY || elem_oid == OID_NAME ||
           elem_oid == OID_XML || elem_oid == OID_POINT || elem_oid == OID_VARBIT;
}

/* The extension types Debezium maps and tributary does not. */
static bool debezium_maps(const char *name)
{
    static const char *const names[] = {"geometry", "geography", "vector",
                                        "halfvec",  "sparsevec", NULL};
    for (size_t i = 0; name != NULL && names[i] != NULL; i++) {
        if (strcmp(name, names[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* The geometric types whose values Debezium takes from its JDBC driver's
 * objects (their text, with Java's numbers) when it includes unknown types. */
static bool geometric(uint32_t oid)
{
    return oid == OID_LSEG || oid == OID_PATH || oid == OID_BOX || oid == OID_POLYGON ||
           oid == OID_LINE || oid == OID_CIRCLE;
}

tb_pg_fate_t tb_pg_unknown_fate(const tb_pg_type_t *t, const tb_pg_modes_t *modes,
                                char *reason, size_t reason_size)
{
    const char *name = t->name != NULL ? t->name : "?";
    bool array = t->elem_oid != 0;
    tb_pg_type_t elem = array ? tb_pg_array_element(t) : *t;
    char ignored[8];
    if (array && tb_pg_array_left_out(elem.oid)) {
        snprintf(reason, reason_size,
                 "type %s is left out of the records, as Debezium maps no array of it",
                 name);
        return TB_PG_LEFT_OUT;
    }
    elem.opaque = false;
    tb_schema_t *mapped =
        array ? tb_pg_type_schema(&elem, modes, ignored, sizeof(ignored)) : NULL;
    tb_schema_decref(mapped);
    if (mapped != NULL || debezium_maps(elem.base_name)) {
        snprintf(reason, reason_size,
                 "type %s (oid %u) is not supported (Debezium maps it, tributary does "
                 "not yet)",
                 name, (unsigned)t->oid);
        return TB_PG_REFUSED;
    }
    if (geometric(elem.oid) && modes->include_unknown) {
        snprintf(reason, reason_size,
                 "type %s (oid %u) is not supported with include.unknown.datatypes "
                 "(Debezium writes its JDBC driver's text of it, which tributary does "
                 "not reproduce)",
                 name, (unsigned)t->oid);
        return TB_PG_REFUSED;
    }
    if (modes->include_unknown) {
        snprintf(reason, reason_size,
                 "type %s is one Debezium does not know: written as the bytes of its "
                 "text (include.unknown.datatypes=true)",
                 name);
        return TB_PG_OPAQUE;
    }
    snprintf(reason, reason_size,
             "type %s is one Debezium does not know: left out of the records, as "
             "Debezium does (include.unknown.datatypes=true writes it as the bytes of "
             "its text)",
             name);
    return TB_PG_LEFT_OUT;
}

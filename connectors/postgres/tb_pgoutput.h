/*
 * tb_pgoutput.h - the messages of PostgreSQL's logical replication protocol
 * (pgoutput, proto_version 1), decoded from the payload of one XLogData
 * message, and the framing of the replication stream's CopyData messages.
 *
 * Decoding allocates nothing per message: strings and column data point
 * into the buffer given (valid as long as it is), and the arrays (columns,
 * relation ids) live in the message, reused by the next decode into it and
 * freed by tb_pgoutput_msg_clear(). Every multi-byte number is big-endian,
 * as on the wire.
 */
#ifndef TB_PGOUTPUT_H
#define TB_PGOUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    TB_PGOUTPUT_BEGIN = 'B',
    TB_PGOUTPUT_COMMIT = 'C',
    TB_PGOUTPUT_ORIGIN = 'O',
    TB_PGOUTPUT_RELATION = 'R',
    TB_PGOUTPUT_TYPE = 'Y',
    TB_PGOUTPUT_INSERT = 'I',
    TB_PGOUTPUT_UPDATE = 'U',
    TB_PGOUTPUT_DELETE = 'D',
    TB_PGOUTPUT_TRUNCATE = 'T',
    TB_PGOUTPUT_MESSAGE = 'M',
} tb_pgoutput_kind_t;

/* One column of a tuple: 'n' null, 'u' an unchanged TOASTed value (not
 * sent), 't' text of len bytes (not NUL-terminated). */
typedef struct {
    char kind;
    const char *data;
    uint32_t len;
} tb_pg_datum_t;

typedef struct {
    uint16_t count;
    tb_pg_datum_t *columns;
    size_t cap;
} tb_pg_tuple_t;

/* A column of a Relation message. flags bit 1: part of the replica
 * identity key. */
typedef struct {
    uint8_t flags;
    const char *name;
    uint32_t type_oid;
    int32_t typmod;
} tb_pg_rel_column_t;

typedef struct {
    tb_pgoutput_kind_t kind;
    /* Begin: the commit's LSN (final_lsn), its time and the xid. Commit: the
     * commit's LSN, the end of the transaction and its time. */
    uint64_t lsn;
    uint64_t end_lsn;
    int64_t time_us; /* microseconds since 2000-01-01 UTC (PostgreSQL's epoch) */
    uint32_t xid;
    /* Relation, Type, Insert, Update, Delete */
    uint32_t relid; /* a Type's type oid */
    /* Relation and Type */
    const char *nspname;
    const char *relname;
    char replica_identity; /* 'd' default, 'n' nothing, 'f' full, 'i' index */
    uint16_t ncolumns;
    tb_pg_rel_column_t *columns;
    size_t columns_cap;
    /* Update and Delete: 'K' old key columns, 'O' the old row, 0 none */
    char old_kind;
    tb_pg_tuple_t old_tuple;
    tb_pg_tuple_t new_tuple; /* Insert and Update */
    /* Truncate: options bit 1 CASCADE, bit 2 RESTART IDENTITY */
    uint8_t truncate_options;
    uint32_t nrelids;
    uint32_t *relids;
    size_t relids_cap;
} tb_pgoutput_msg_t;

/* Decodes one pgoutput message of len bytes at buf into msg (borrowing buf).
 * Returns 0, or -1 with what is wrong in errstr (a truncated message, an
 * unknown kind). */
int tb_pgoutput_decode(const uint8_t *buf, size_t len, tb_pgoutput_msg_t *msg,
                       char *errstr, size_t errstr_size);

/* Frees msg's arrays; msg may then be decoded into again. */
void tb_pgoutput_msg_clear(tb_pgoutput_msg_t *msg);

/* A CopyData message of the replication stream. */
typedef struct {
    char kind;          /* 'w' XLogData, 'k' primary keepalive */
    uint64_t wal_start; /* 'w': where data starts in the WAL */
    uint64_t wal_end;   /* the server's end of WAL */
    int64_t send_time_us;
    bool reply_requested; /* 'k': the server asks for a status update now */
    const uint8_t *data;  /* 'w': the pgoutput message, borrowed */
    size_t data_len;
} tb_pg_frame_t;

/* Parses a CopyData message. Returns 0, or -1 with errstr. */
int tb_pg_frame_parse(const uint8_t *buf, size_t len, tb_pg_frame_t *frame, char *errstr,
                      size_t errstr_size);

/* Writes a standby status update ('r': written, flushed and applied up to
 * lsn, at now_us since PostgreSQL's epoch) into out (34 bytes). */
#define TB_PG_STATUS_LEN 34
void tb_pg_status_update(uint8_t out[TB_PG_STATUS_LEN], uint64_t lsn, int64_t now_us,
                         bool reply);

/* Microseconds between the Unix epoch and PostgreSQL's (2000-01-01). */
#define TB_PG_EPOCH_OFFSET_US INT64_C(946684800000000)

/* "X/Y", PostgreSQL's spelling of an LSN, into out (at least 18 bytes). */
void tb_pg_lsn_format(uint64_t lsn, char *out, size_t size);

/* Parses "X/Y". Returns 0, or -1 when text is no LSN. */
int tb_pg_lsn_parse(const char *text, uint64_t *lsn);

#endif

/*
 * tb_web_assets.h - the web UI's files, embedded at build time.
 *
 * web/tb_embed.c turns the .html, .css, .js and .svg files of web/ into byte arrays
 * in a generated C source (build/generated/tb_web_assets.c) that defines
 * tb_web_assets; api/ui.c serves them at /ui and /ui/{path}. Nothing is read
 * from disk at run time.
 */
#ifndef TB_WEB_ASSETS_H
#define TB_WEB_ASSETS_H

#include <stddef.h>

typedef struct {
    const char *name;          /* the file name, served as /ui/<name> */
    const char *content_type;  /* static, with its charset */
    const unsigned char *data; /* size bytes, no NUL among them, none after */
    size_t size;
} tb_web_asset_t;

/* Every embedded asset, sorted by name, terminated by a zeroed entry. */
extern const tb_web_asset_t tb_web_assets[];

#endif

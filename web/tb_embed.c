/*
 * tb_embed - writes the C source that embeds the web UI's assets.
 *
 *     tb_embed OUTPUT.c FILE...
 *
 * Each FILE becomes a byte array and an entry of tb_web_assets
 * (web/tb_web_assets.h), named by its base name, with a content type chosen
 * by its extension (.html, .css, .js, .svg; any other is an error). The
 * server sends a body up to its first NUL, so a file holding a NUL byte is
 * refused. Entries are sorted by name, so the output depends only on the
 * files. Runs on the build machine as a CMake step; needs only a C compiler.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *path;
    const char *name;
    const char *content_type;
} tb_embed_input_t;

static const struct {
    const char *extension;
    const char *content_type;
} tb_embed_types[] = {
    {".html", "text/html; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".svg", "image/svg+xml"},
};

static const char *tb_embed_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

static const char *tb_embed_content_type(const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < sizeof(tb_embed_types) / sizeof(tb_embed_types[0]); i++) {
        size_t ext_len = strlen(tb_embed_types[i].extension);
        if (len > ext_len &&
            strcmp(name + len - ext_len, tb_embed_types[i].extension) == 0) {
            return tb_embed_types[i].content_type;
        }
    }
    return NULL;
}

/* Names end up in C string literals and URLs: letters, digits, '.', '-', '_'. */
static int tb_embed_name_ok(const char *name)
{
    for (const char *p = name; *p != '\0'; p++) {
        if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
                   *p) == NULL) {
            return 0;
        }
    }
    return name[0] != '\0' && name[0] != '.';
}

static int tb_embed_compare(const void *a, const void *b)
{
    return strcmp(((const tb_embed_input_t *)a)->name,
                  ((const tb_embed_input_t *)b)->name);
}

/* Writes FILE's bytes as the array asset_<index>. Returns its size, or -1
 * after printing why. */
static long tb_embed_array(FILE *out, const tb_embed_input_t *input, size_t index)
{
    FILE *in = fopen(input->path, "rb");
    long size = 0;
    int c;
    if (in == NULL) {
        fprintf(stderr, "tb_embed: %s: %s\n", input->path, strerror(errno));
        return -1;
    }
    fprintf(out, "/* %s */\nstatic const unsigned char asset_%zu[] = {", input->name,
            index);
    while ((c = fgetc(in)) != EOF) {
        if (c == 0) {
            fprintf(stderr,
                    "tb_embed: %s: a NUL byte at offset %ld (only text is served)\n",
                    input->path, size);
            fclose(in);
            return -1;
        }
        fprintf(out, "%s0x%02x,", size % 12 == 0 ? "\n    " : " ", (unsigned)c);
        size++;
    }
    if (ferror(in)) {
        fprintf(stderr, "tb_embed: %s: %s\n", input->path, strerror(errno));
        fclose(in);
        return -1;
    }
    fclose(in);
    if (size == 0) {
        /* an empty array is not C11 */
        fprintf(out, "0x00");
    }
    fprintf(out, "\n};\n\n");
    return size;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: tb_embed OUTPUT.c FILE...\n");
        return 2;
    }
    size_t count = (size_t)argc - 2;
    tb_embed_input_t *inputs = calloc(count, sizeof(*inputs));
    long *sizes = calloc(count, sizeof(*sizes));
    char *temp_path = malloc(strlen(argv[1]) + 5);
    FILE *out = NULL;
    int rc = 1;
    if (inputs == NULL || sizes == NULL || temp_path == NULL) {
        fprintf(stderr, "tb_embed: out of memory\n");
        goto done;
    }
    for (size_t i = 0; i < count; i++) {
        inputs[i].path = argv[i + 2];
        inputs[i].name = tb_embed_base_name(argv[i + 2]);
        inputs[i].content_type = tb_embed_content_type(inputs[i].name);
        if (!tb_embed_name_ok(inputs[i].name)) {
            fprintf(stderr, "tb_embed: %s: a name other than [A-Za-z0-9._-]\n",
                    inputs[i].path);
            goto done;
        }
        if (inputs[i].content_type == NULL) {
            fprintf(stderr, "tb_embed: %s: no content type for this extension\n",
                    inputs[i].path);
            goto done;
        }
    }
    qsort(inputs, count, sizeof(*inputs), tb_embed_compare);
    for (size_t i = 1; i < count; i++) {
        if (strcmp(inputs[i - 1].name, inputs[i].name) == 0) {
            fprintf(stderr, "tb_embed: two assets named %s\n", inputs[i].name);
            goto done;
        }
    }

    /* written beside the output and renamed, so a failed run leaves no
     * half-written source for the next build to compile */
    sprintf(temp_path, "%s.tmp", argv[1]);
    out = fopen(temp_path, "w");
    if (out == NULL) {
        fprintf(stderr, "tb_embed: %s: %s\n", temp_path, strerror(errno));
        goto done;
    }
    fprintf(out,
            "/* Generated by web/tb_embed.c from the files in web/: do not edit. */\n"
            "#include \"web/tb_web_assets.h\"\n\n");
    for (size_t i = 0; i < count; i++) {
        sizes[i] = tb_embed_array(out, &inputs[i], i);
        if (sizes[i] < 0) {
            goto done;
        }
    }
    fprintf(out, "const tb_web_asset_t tb_web_assets[] = {\n");
    for (size_t i = 0; i < count; i++) {
        fprintf(out, "    {\"%s\", \"%s\", asset_%zu, %ld},\n", inputs[i].name,
                inputs[i].content_type, i, sizes[i]);
    }
    fprintf(out, "    {0},\n};\n");
    if (fclose(out) != 0) {
        out = NULL;
        fprintf(stderr, "tb_embed: %s: %s\n", temp_path, strerror(errno));
        goto done;
    }
    out = NULL;
    if (rename(temp_path, argv[1]) != 0) {
        fprintf(stderr, "tb_embed: %s: %s\n", argv[1], strerror(errno));
        goto done;
    }
    rc = 0;

done:
    if (out != NULL) {
        fclose(out);
    }
    if (rc != 0 && temp_path != NULL) {
        remove(temp_path);
    }
    free(temp_path);
    free(sizes);
    free(inputs);
    return rc;
}

/* ReplaceField, MaskField, Flatten, HeaderFrom and SetSchemaMetadata on
 * records with and without schemas, and the errors Connect reports. */
#include "tb_smt_test.h"

/* A struct of id (int32), name (string) and an optional string with a
 * default, "x". */
#define PERSON_FIELDS                                                                    \
    "[{'type':'int32','optional':false,'field':'id'},"                                   \
    "{'type':'string','optional':false,'field':'name'},"                                 \
    "{'type':'string','optional':true,'default':'x','field':'note'}]"

static void test_replace_field(void **state)
{
    (void)state;
    tb_chain_t *chain = chain_of("{\"transforms\":\"r\",\"transforms.r.type\":"
                                 "\"ReplaceField$Value\",\"transforms.r.exclude\":\"id\","
                                 "\"transforms.r.renames\":\"name:who,note:n\"}");
    tb_record_t r = json_record(PERSON_FIELDS, "{'id':1,'name':'ann'}");
    tb_value_struct_set(r.value.value, "note", NULL);
    apply(chain, &r, 0, NULL);
    /* the null reads as its default: replace.null.with.default is true */
    assert_value(&r, true,
                 "{'schema':{'type':'struct','fields':[{'type':'string','optional':false,"
                 "'field':'who'},{'type':'string','optional':true,'default':'x',"
                 "'field':'n'}],'optional':false},'payload':{'who':'ann','n':'x'}}");
    tb_record_release(&r);
    /* another schema, then the first again: each gets its own */
    r = json_record("[{'type':'string','optional':false,'field':'name'}]",
                    "{'name':'bo'}");
    apply(chain, &r, 0, NULL);
    assert_value(&r, true,
                 "{'schema':{'type':'struct','fields':[{'type':'string','optional':false,"
                 "'field':'who'}],'optional':false},'payload':{'who':'bo'}}");
    tb_record_release(&r);
    r = json_record(PERSON_FIELDS, "{'id':2,'name':'cy','note':'y'}");
    apply(chain, &r, 0, NULL);
    assert_value(&r, false, "{'who':'cy','n':'y'}");
    tb_record_release(&r);
    r = json_record(NULL, "{'id':1,'name':'ann','other':true}");
    apply(chain, &r, 0, NULL);
    assert_value(&r, false, "{'who':'ann','other':true}");
    tb_record_release(&r);
    tb_record_t tomb = record_of("t", NULL);
    apply(chain, &tomb, 0, NULL);
    assert_null(tomb.value.value);
    tb_record_release(&tomb);
    r = record_of("t", "plain");
    apply(chain, &r, -1,
          "Only Struct objects supported for [field replacement], found: "
          "java.lang.String");
    tb_record_release(&r);
    tb_chain_destroy(chain);

    /* include, and nulls kept as they are */
    chain = chain_of("{\"transforms\":\"r\",\"transforms.r.type\":\"ReplaceField$Value\","
                     "\"transforms.r.include\":\"note,id\","
                     "\"transforms.r.replace.null.with.default\":\"false\"}");
    r = json_record(PERSON_FIELDS, "{'id':1,'name':'ann'}");
    /* JsonConverter reads a null as the default: make a real null */
    tb_value_struct_set(r.value.value, "note", NULL);
    apply(chain, &r, 0, NULL);
    assert_int_equal(tb_value_size(r.value.value), 2);
    assert_int_equal(tb_value_int64(tb_value_struct_get(r.value.value, "id")), 1);
    assert_null(tb_value_struct_get(r.value.value, "note"));
    tb_record_release(&r);
    tb_chain_destroy(chain);

    /* without renames a schemaless map loses the dropped entries, the rest in
     * their order; with a rename onto a kept name, the later value wins */
    chain = chain_of("{\"transforms\":\"r\",\"transforms.r.type\":\"ReplaceField$Value\","
                     "\"transforms.r.exclude\":\"b,d,e\"}");
    r = json_record(NULL, "{'a':1,'b':2,'c':[3],'d':4,'e':5}");
    apply(chain, &r, 0, NULL);
    assert_value(&r, false, "{'a':1,'c':[3]}");
    tb_record_release(&r);
    tb_chain_destroy(chain);
    chain =
        chain_of("{\"transforms\":\"r\",\"transforms.r.type\":\"ReplaceField$Value\","
                 "\"transforms.r.include\":\"a,c\",\"transforms.r.renames\":\"c:a\"}");
    r = json_record(NULL, "{'a':1,'b':2,'c':3}");
    apply(chain, &r, 0, NULL);
    assert_value(&r, false, "{'a':3}");
    tb_record_release(&r);
    tb_chain_destroy(chain);

    chain = chain_of("{\"transforms\":\"r\",\"transforms.r.type\":\"ReplaceField$Value\","
                     "\"transforms.r.renames\":\"id:name\"}");
    r = json_record(PERSON_FIELDS, "{'id':1,'name':'ann'}");
    apply(chain, &r, -1, "Cannot create field because of field name duplication name");
    tb_record_release(&r);
    tb_chain_destroy(chain);

    json_t *errors = validate("{\"transforms\":\"mask\",\"transforms.mask.type\":"
                              "\"ReplaceField$Key\",\"transforms.mask.renames\":"
                              "\"a:b,c,d:e:f\"}");
    assert_error(errors, "transforms.mask.renames",
                 "Invalid value a:b,c,d:e:f for configuration transforms.mask.renames: "
                 "Invalid rename mapping: c");
    json_decref(errors);

    /* Connect 4.0 removed blacklist and whitelist: refused, naming their
     * replacements, rather than ignored */
    errors = validate("{\"transforms\":\"r\",\"transforms.r.type\":"
                      "\"ReplaceField$Value\",\"transforms.r.blacklist\":\"a\","
                      "\"transforms.r.whitelist\":\"b,c\"}");
    assert_error(errors, "transforms.r.blacklist",
                 "Invalid value a for configuration transforms.r.blacklist: "
                 "blacklist was removed in Kafka Connect 4.0: use exclude");
    assert_error(errors, "transforms.r.whitelist",
                 "Invalid value b,c for configuration transforms.r.whitelist: "
                 "whitelist was removed in Kafka Connect 4.0: use include");
    json_decref(errors);
}

/* field.syntax.version (KIP-821): ValueToKey takes it as of Connect 4.4, as
 * ExtractField does; V1 taken, V2 (nested paths) refused naming the key. */
static void test_field_syntax_version(void **state)
{
    (void)state;
    const char *types[] = {"ValueToKey", "ExtractField$Value"};
    for (size_t i = 0; i < 2; i++) {
        char config[512];
        snprintf(config, sizeof(config),
                 "{\"transforms\":\"t\",\"transforms.t.type\":\"%s\","
                 "\"transforms.t.fields\":\"a\",\"transforms.t.field\":\"a\","
                 "\"transforms.t.field.syntax.version\":\"%s\"}",
                 types[i], "v1");
        json_t *errors = validate(config);
        assert_int_equal(tb_config_error_count(errors), 0);
        json_decref(errors);
        snprintf(config, sizeof(config),
                 "{\"transforms\":\"t\",\"transforms.t.type\":\"%s\","
                 "\"transforms.t.fields\":\"a\",\"transforms.t.field\":\"a\","
                 "\"transforms.t.field.syntax.version\":\"%s\"}",
                 types[i], "V2");
        errors = validate(config);
        assert_error(errors, "transforms.t.field.syntax.version",
                     "Invalid value V2 for configuration "
                     "transforms.t.field.syntax.version: String must be one of: V1");
        json_decref(errors);
    }
}

/* replace.null.with.default, one definition, read by each transform that
 * copies struct fields: ExtractField, ValueToKey and InsertField here. */
static void test_replace_null_with_default(void **state)
{
    (void)state;
    const char *configs[] = {
        "{\"transforms\":\"e\",\"transforms.e.type\":\"ExtractField$Value\","
        "\"transforms.e.field\":\"note\"%s}",
        "{\"transforms\":\"k,e\",\"transforms.k.type\":\"ValueToKey\","
        "\"transforms.k.fields\":\"note\",\"transforms.e.type\":\"ExtractField$Key\","
        "\"transforms.e.field\":\"note\"%s}",
        "{\"transforms\":\"i,e\",\"transforms.i.type\":\"InsertField$Value\","
        "\"transforms.i.static.field\":\"s\",\"transforms.i.static.value\":\"v\","
        "\"transforms.e.type\":\"ExtractField$Value\",\"transforms.e.field\":\"note\","
        "\"transforms.e.replace.null.with.default\":\"false\"%s}",
    };
    for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
        for (int replace = 0; replace <= 1; replace++) {
            char config[1024];
            snprintf(config, sizeof(config), configs[i],
                     replace ? ""
                             : ",\"transforms.k.replace.null.with.default\":\"false\","
                               "\"transforms.i.replace.null.with.default\":\"false\","
                               "\"transforms.e.replace.null.with.default\":\"false\"");
            tb_chain_t *chain = chain_of(config);
            tb_record_t r = json_record(PERSON_FIELDS, "{'id':1,'name':'ann'}");
            tb_value_struct_set(r.value.value, "note", NULL);
            apply(chain, &r, 0, NULL);
            tb_record_side_t *s =
                tb_record_side(&r, i == 1 ? TB_SIDE_KEY : TB_SIDE_VALUE);
            if (replace) {
                assert_string_equal(tb_value_text(s->value, NULL), "x");
            } else {
                assert_null(s->value);
            }
            tb_record_release(&r);
            tb_chain_destroy(chain);
        }
    }
}

#define MASK(spec)                                                                       \
    "{\"transforms\":\"mask\",\"transforms.mask.type\":\"MaskField$Value\","             \
    "\"transforms.mask.fields\":" spec "}"

/* Every type Connect masks, with a schema. */
#define MASKED_FIELDS                                                                    \
    "[{'type':'int32','optional':false,'field':'i'},"                                    \
    "{'type':'string','optional':false,'field':'s'},"                                    \
    "{'type':'boolean','optional':false,'field':'b'},"                                   \
    "{'type':'double','optional':false,'field':'d'},"                                    \
    "{'type':'int64','optional':false,'name':'org.apache.kafka.connect.data.Timestamp'," \
    "'version':1,'field':'at'},"                                                         \
    "{'type':'array','items':{'type':'int8','optional':false},'optional':false,"         \
    "'field':'a'},"                                                                      \
    "{'type':'string','optional':true,'field':'n'},"                                     \
    "{'type':'bytes','optional':false,'field':'raw'}]"
#define MASKED_PAYLOAD                                                                   \
    "{'i':7,'s':'secret','b':true,'d':2.5,'at':1700000000000,'a':[1,2],'n':null,"        \
    "'raw':'AQI='}"

static void test_mask_field(void **state)
{
    (void)state;
    tb_chain_t *chain = chain_of(MASK("\"i,s,b,d,at,a,n,none\""));
    tb_record_t r = json_record(MASKED_FIELDS, MASKED_PAYLOAD);
    apply(chain, &r, 0, NULL);
    assert_value(&r, false,
                 "{'i':0,'s':'','b':false,'d':0.0,'at':0,'a':[],'n':null,'raw':'AQI='}");
    tb_record_release(&r);
    r = json_record(NULL, "{'i':7,'s':'x','m':{'k':1},'other':1}");
    tb_chain_destroy(chain);
    chain = chain_of(MASK("\"i,s,m,gone\""));
    apply(chain, &r, 0, NULL);
    /* Connect puts every masked field, a null when it was absent */
    assert_value(&r, false, "{'i':0,'s':'','m':{},'other':1,'gone':null}");
    tb_record_release(&r);
    r = record_of("t", NULL);
    apply(chain, &r, -1,
          "Only Map objects supported in absence of schema for [mask fields], found: "
          "null");
    tb_record_release(&r);
    tb_chain_destroy(chain);

    chain = chain_of(MASK("\"raw\""));
    r = json_record(MASKED_FIELDS, MASKED_PAYLOAD);
    apply(chain, &r, -1, "Cannot mask value of type: class [B");
    tb_record_release(&r);
    tb_chain_destroy(chain);

    /* a replacement is read as the field's type */
    chain = chain_of(MASK("\"i,s,d\",\"transforms.mask.replacement\":\"12\""));
    r = json_record(MASKED_FIELDS, MASKED_PAYLOAD);
    apply(chain, &r, 0, NULL);
    assert_value(&r, false,
                 "{'i':12,'s':'12','b':true,'d':12.0,'at':1700000000000,'a':[1,2],"
                 "'n':null,'raw':'AQI='}");
    tb_record_release(&r);
    tb_chain_destroy(chain);
    chain = chain_of(MASK("\"i\",\"transforms.mask.replacement\":\"***\""));
    r = json_record(MASKED_FIELDS, MASKED_PAYLOAD);
    apply(chain, &r, -1, "Unable to convert *** (class java.lang.String) to number");
    tb_record_release(&r);
    tb_chain_destroy(chain);
    chain = chain_of(MASK("\"at\",\"transforms.mask.replacement\":\"1\""));
    r = json_record(MASKED_FIELDS, MASKED_PAYLOAD);
    apply(chain, &r, -1,
          "Cannot mask value of type class java.util.Date with custom replacement.");
    tb_record_release(&r);
    tb_chain_destroy(chain);

    json_t *errors = validate(MASK("\"\",\"transforms.mask.replacement\":\"\""));
    assert_error(errors, "transforms.mask.fields",
                 "Invalid value  for configuration transforms.mask.fields: Empty list");
    assert_error(errors, "transforms.mask.replacement",
                 "Invalid value  for configuration transforms.mask.replacement: String "
                 "must be non-empty");
    json_decref(errors);
}

static void test_flatten(void **state)
{
    (void)state;
    tb_chain_t *chain = chain_of("{\"transforms\":\"f\",\"transforms.f.type\":"
                                 "\"Flatten$Value\"}");
    tb_record_t r =
        json_record("[{'type':'int32','optional':false,'field':'id'},"
                    "{'type':'struct','optional':true,'field':'addr','fields':["
                    "{'type':'string','optional':false,'field':'city'},"
                    "{'type':'struct','optional':false,'field':'zip','fields':["
                    "{'type':'int32','optional':false,'default':0,'field':'code'}]}]},"
                    "{'type':'array','items':{'type':'string','optional':false},"
                    "'optional':false,'field':'tags'}]",
                    "{'id':1,'addr':{'city':'Oslo','zip':{'code':150}},'tags':['a']}");
    apply(chain, &r, 0, NULL);
    /* leaves under the optional struct are optional; defaults stay */
    assert_value(
        &r, true,
        "{'schema':{'type':'struct','fields':["
        "{'type':'int32','optional':false,'field':'id'},"
        "{'type':'string','optional':true,'field':'addr.city'},"
        "{'type':'int32','optional':true,'default':0,'field':'addr.zip.code'},"
        "{'type':'array','items':{'type':'string','optional':false},"
        "'optional':false,'field':'tags'}],'optional':false},"
        "'payload':{'id':1,'addr.city':'Oslo','addr.zip.code':150,'tags':['a']}}");
    tb_record_release(&r);
    r = json_record("[{'type':'map','keys':{'type':'string','optional':false},"
                    "'values':{'type':'int32','optional':false},'optional':false,"
                    "'field':'m'}]",
                    "{'m':{}}");
    apply(chain, &r, -1,
          "Flatten transformation does not support MAP for record with schemas (for "
          "field m).");
    tb_record_release(&r);
    tb_record_t tomb = record_of("t", NULL);
    apply(chain, &tomb, 0, NULL);
    tb_record_release(&tomb);
    tb_chain_destroy(chain);

    chain = chain_of("{\"transforms\":\"f\",\"transforms.f.type\":\"Flatten$Value\","
                     "\"transforms.f.delimiter\":\"_\"}");
    r = json_record(NULL, "{'a':{'b':{'c':1},'d':null},'e':[{'x':1}],'f':'s'}");
    apply(chain, &r, 0, NULL);
    assert_value(&r, false, "{'a_b_c':1,'a_d':null,'e':[{'x':1}],'f':'s'}");
    tb_record_release(&r);
    r = json_record(NULL, "'text'");
    apply(chain, &r, -1,
          "Only Map objects supported in absence of schema for [flattening], found: "
          "java.lang.String");
    tb_record_release(&r);
    tb_chain_destroy(chain);
}

#define HEADER_FROM(fields, headers, operation)                                          \
    "{\"transforms\":\"h\",\"transforms.h.type\":\"HeaderFrom$Value\","                  \
    "\"transforms.h.fields\":\"" fields "\",\"transforms.h.headers\":\"" headers         \
    "\",\"transforms.h.operation\":\"" operation "\"}"

static void assert_header(const tb_record_t *r, const char *name, const char *value)
{
    const tb_header_t *h = tb_record_header(r, name);
    assert_non_null(h);
    if (value == NULL) {
        assert_null(h->value);
    } else {
        assert_int_equal(h->value_len, strlen(value));
        assert_memory_equal(h->value, value, h->value_len);
    }
}

static void test_header_from(void **state)
{
    (void)state;
    tb_chain_t *chain = chain_of(HEADER_FROM("id,note", "hid,hnote", "copy"));
    tb_record_t r = json_record(PERSON_FIELDS, "{'id':1,'name':'ann'}");
    tb_value_struct_set(r.value.value, "note", NULL);
    apply(chain, &r, 0, NULL);
    assert_header(&r, "hid", "1");
    assert_header(&r, "hnote", "x"); /* the default, as replace.null.with.default */
    assert_int_equal(tb_schema_field_count(r.value.schema), 3);
    tb_record_release(&r);
    tb_chain_destroy(chain);

    chain = chain_of(HEADER_FROM("name", "who", "MOVE"));
    r = json_record(PERSON_FIELDS, "{'id':1,'name':'ann','note':'n'}");
    apply(chain, &r, 0, NULL);
    assert_header(&r, "who", "ann");
    assert_value(&r, true,
                 "{'schema':{'type':'struct','fields':[{'type':'int32','optional':false,"
                 "'field':'id'},{'type':'string','optional':true,'default':'x',"
                 "'field':'note'}],'optional':false},'payload':{'id':1,'note':'n'}}");
    tb_record_release(&r);
    r = json_record(NULL, "{'name':{'k':[1]},'id':2}");
    apply(chain, &r, 0, NULL);
    assert_header(&r, "who", "{\"k\":[1]}");
    assert_value(&r, false, "{'id':2}");
    tb_record_release(&r);
    r = json_record(NULL, "{'id':2}");
    apply(chain, &r, 0, NULL);
    assert_header(&r, "who", NULL); /* an absent field makes a null header */
    tb_record_release(&r);
    r = json_record(PERSON_FIELDS, "{'id':1,'name':'ann'}");
    tb_chain_destroy(chain);
    chain = chain_of(HEADER_FROM("nope", "h", "copy"));
    apply(chain, &r, -1, "Unknown field: nope");
    tb_record_release(&r);
    r = record_of("t", NULL);
    apply(chain, &r, -1,
          "Only Map objects supported in absence of schema for [header copy], found: "
          "null");
    tb_record_release(&r);
    tb_chain_destroy(chain);

    json_t *errors = validate(HEADER_FROM("a,b", "h", "rename"));
    assert_error(errors, "transforms.h.operation",
                 "Invalid value rename for configuration transforms.h.operation: String "
                 "must be one of: move, copy");
    json_decref(errors);
    errors = validate(HEADER_FROM("a,b", "h", "copy"));
    assert_error(errors, "transforms.h.fields",
                 "'fields' config must have the same number of elements as 'headers' "
                 "config.");
    json_decref(errors);
}

static void test_set_schema_metadata(void **state)
{
    (void)state;
    tb_chain_t *chain =
        chain_of("{\"transforms\":\"m\",\"transforms.m.type\":"
                 "\"SetSchemaMetadata$Value\",\"transforms.m.schema.name\":"
                 "\"com.example.Person\",\"transforms.m.schema.version\":\"3\"}");
    tb_record_t r = json_record(PERSON_FIELDS, "{'id':1,'name':'ann','note':'n'}");
    apply(chain, &r, 0, NULL);
    assert_value(&r, true,
                 "{'schema':{'type':'struct','fields':[{'type':'int32','optional':false,"
                 "'field':'id'},{'type':'string','optional':false,'field':'name'},"
                 "{'type':'string','optional':true,'default':'x','field':'note'}],"
                 "'optional':false,'name':'com.example.Person','version':3},"
                 "'payload':{'id':1,'name':'ann','note':'n'}}");
    tb_record_release(&r);
    r = json_record(NULL, "{'id':1}");
    apply(chain, &r, -1, "Schema required for [updating schema metadata]");
    tb_record_release(&r);
    r = record_of("t", NULL); /* a schemaless null passes */
    apply(chain, &r, 0, NULL);
    tb_record_release(&r);
    tb_chain_destroy(chain);

    json_t *errors = validate("{\"transforms\":\"m\",\"transforms.m.type\":"
                              "\"SetSchemaMetadata$Key\"}");
    assert_error(errors, "transforms.m.schema.name",
                 "Neither schema name nor version configured");
    json_decref(errors);
    errors =
        validate("{\"transforms\":\"m\",\"transforms.m.type\":"
                 "\"SetSchemaMetadata$Key\",\"transforms.m.schema.version\":\"v1\"}");
    assert_error(errors, "transforms.m.schema.version",
                 "Invalid value v1 for configuration transforms.m.schema.version: Not a "
                 "number of type INT");
    json_decref(errors);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replace_field),
        cmocka_unit_test(test_replace_null_with_default),
        cmocka_unit_test(test_field_syntax_version),
        cmocka_unit_test(test_mask_field),
        cmocka_unit_test(test_flatten),
        cmocka_unit_test(test_header_from),
        cmocka_unit_test(test_set_schema_metadata),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

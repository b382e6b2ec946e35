/* Cast and TimestampConverter on records with and without schemas, and the
 * errors Connect reports. */
#include "tb_smt_test.h"

#include "connectors/transforms/tb_date_format.h"
#include "connectors/transforms/tb_java_number.h"

#define CAST(side, spec)                                                                 \
    "{\"transforms\":\"c\",\"transforms.c.type\":\"Cast$" side "\","                     \
    "\"transforms.c.spec\":\"" spec "\"}"

#define CAST_FIELDS                                                                      \
    "[{'type':'int32','optional':false,'field':'i'},"                                    \
    "{'type':'string','optional':true,'field':'s'},"                                     \
    "{'type':'double','optional':false,'field':'d'},"                                    \
    "{'type':'boolean','optional':false,'field':'b'},"                                   \
    "{'type':'float','optional':false,'field':'f'},"                                     \
    "{'type':'double','optional':false,'field':'e'},"                                    \
    "{'type':'int64','optional':false,'name':'org.apache.kafka.connect.data.Timestamp'," \
    "'version':1,'field':'at'},"                                                         \
    "{'type':'int32','optional':false,'name':'org.apache.kafka.connect.data.Date',"      \
    "'version':1,'field':'day'},"                                                        \
    "{'type':'bytes','optional':false,'field':'raw'},"                                   \
    "{'type':'bytes','optional':false,'name':'org.apache.kafka.connect.data.Decimal',"   \
    "'version':1,'parameters':{'scale':'2'},'field':'price'},"                           \
    "{'type':'struct','fields':[],'optional':false,'field':'st'}]"
#define CAST_PAYLOAD                                                                     \
    "{'i':7,'s':'42','d':-2.75,'b':true,'f':0.1,'e':1e10,'at':1700000000000,"            \
    "'day':19675,'raw':'AQI=','price':'MDk=','st':{}}"

static void test_cast_fields_with_schema(void **state)
{
    (void)state;
    tb_chain_t *chain = chain_of(CAST("Value", "i:string,s:int8,d:int32,b:int64,f:string,"
                                               "e:string,at:string,day:string,raw:string,"
                                               "price:string"));
    tb_record_t r = json_record(CAST_FIELDS, CAST_PAYLOAD);
    apply(chain, &r, 0, NULL);
    assert_value(&r, false,
                 "{'i':'7','s':42,'d':-2,'b':1,'f':'0.1','e':'1.0E10',"
                 "'at':'2023-11-14T22:13:20.000Z','day':'2023-11-14','raw':'AQI=',"
                 "'price':'123.45','st':{}}");
    /* a cast field's schema is the plain type, optional as it was */
    const tb_schema_t *schema = r.value.schema;
    assert_int_equal(tb_schema_type(tb_schema_field(schema, "s")->schema), TB_TYPE_INT8);
    assert_true(tb_schema_optional(tb_schema_field(schema, "s")->schema));
    assert_null(tb_schema_name(tb_schema_field(schema, "at")->schema));
    tb_record_release(&r);
    tb_chain_destroy(chain);

    chain =
        chain_of(CAST("Value", "at:int32,price:float64,d:boolean,s:float32,b:float64"));
    r = json_record(CAST_FIELDS, CAST_PAYLOAD);
    apply(chain, &r, 0, NULL);
    /* the timestamp narrows as Java's (int) does */
    assert_int_equal(tb_value_int64(tb_value_struct_get(r.value.value, "at")),
                     (int32_t)1700000000000LL);
    assert_true(tb_value_double(tb_value_struct_get(r.value.value, "price")) == 123.45);
    assert_true(tb_value_boolean(tb_value_struct_get(r.value.value, "d")));
    assert_true(tb_value_double(tb_value_struct_get(r.value.value, "s")) == 42.0f);
    assert_true(tb_value_double(tb_value_struct_get(r.value.value, "b")) == 1.0);
    tb_record_release(&r);
    tb_chain_destroy(chain);
}

static void test_cast_errors(void **state)
{
    (void)state;
    struct {
        const char *config;
        const char *error;
    } cases[] = {
        {CAST("Value", "i:int8,st:int8"),
         "Cast transformation does not support casting from STRUCT; supported types are "
         "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]"},
        {CAST("Value", "raw:int32"), "Unexpected type in Cast transformation: class [B"},
        {CAST("Value", "i:boolean,s:boolean,e:int16"), NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tb_chain_t *chain = chain_of(cases[i].config);
        tb_record_t r = json_record(CAST_FIELDS, CAST_PAYLOAD);
        apply(chain, &r, cases[i].error != NULL ? -1 : 0, cases[i].error);
        tb_record_release(&r);
        tb_chain_destroy(chain);
    }
    tb_chain_t *chain = chain_of(CAST("Value", "s:int8"));
    tb_record_t r = json_record(NULL, "{'s':'300'}");
    apply(chain, &r, -1, "Value (300) was out of range for requested data type");
    tb_record_release(&r);
    tb_chain_destroy(chain);

    json_t *errors = validate(CAST("Value", ""));
    assert_error(errors, "transforms.c.spec", "Must specify at least one field to cast.");
    json_decref(errors);
    errors = validate(CAST("Key", "a:bytes"));
    assert_error(errors, "transforms.c.spec",
                 "Cast transformation does not support casting to BYTES; supported types "
                 "are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]");
    json_decref(errors);
    errors = validate(CAST("Key", "int8,a:int16"));
    assert_error(
        errors, "transforms.c.spec",
        "Cast transformations that specify a type to cast the entire value to may "
        "ony specify a single cast in their spec");
    json_decref(errors);
    errors = validate(CAST("Key", "a:int8:x"));
    assert_error(errors, "transforms.c.spec",
                 "Invalid cast mapping: a:int8:x (field:type, or a type)");
    json_decref(errors);
    errors = validate(CAST("Key", "a:text"));
    assert_error(errors, "transforms.c.spec", "Invalid type found in casting spec: text");
    json_decref(errors);
}

static void test_cast_whole_and_schemaless(void **state)
{
    (void)state;
    tb_chain_t *chain = chain_of(CAST("Value", "int32"));
    tb_record_t r = record_of("t", "  12");
    apply(chain, &r, -1, "Value (  12) was out of range for requested data type");
    tb_record_release(&r);
    r = record_of("t", "-12");
    apply(chain, &r, 0, NULL);
    assert_int_equal(tb_schema_type(r.value.schema), TB_TYPE_INT32);
    assert_int_equal(tb_value_int64(r.value.value), -12);
    tb_record_release(&r);
    r = record_of("t", NULL);
    apply(chain, &r, 0, NULL); /* a tombstone passes */
    assert_null(r.value.value);
    tb_record_release(&r);
    tb_chain_destroy(chain);

    chain = chain_of(CAST("Value", "a:string,n:float64,gone:int8"));
    r = json_record(NULL, "{'a':1,'n':'2.5','other':true}");
    apply(chain, &r, 0, NULL);
    assert_value(&r, false, "{'a':'1','n':2.5,'other':true,'gone':null}");
    tb_record_release(&r);
    r = json_record(NULL, "[1]");
    apply(chain, &r, -1,
          "Only Map objects supported in absence of schema for [cast types], found: "
          "java.util.ArrayList");
    tb_record_release(&r);
    tb_chain_destroy(chain);
}

#define CONVERT(side, keys)                                                              \
    "{\"transforms\":\"t\",\"transforms.t.type\":\"TimestampConverter$" side "\"," keys  \
    "}"

#define TS_FIELDS                                                                        \
    "[{'type':'int32','optional':false,'field':'id'},"                                   \
    "{'type':'int64','optional':true,'name':'org.apache.kafka.connect.data.Timestamp',"  \
    "'version':1,'field':'at'}]"

static void test_timestamp_converter(void **state)
{
    (void)state;
    tb_chain_t *chain =
        chain_of(CONVERT("Value", "\"transforms.t.field\":\"at\","
                                  "\"transforms.t.target.type\":\"string\","
                                  "\"transforms.t.format\":"
                                  "\"yyyy-MM-dd HH:mm:ss.SSS\""));
    tb_record_t r = json_record(TS_FIELDS, "{'id':1,'at':1700000000123}");
    apply(chain, &r, 0, NULL);
    assert_value(&r, true,
                 "{'schema':{'type':'struct','fields':[{'type':'int32','optional':false,"
                 "'field':'id'},{'type':'string','optional':true,'field':'at'}],"
                 "'optional':false},'payload':{'id':1,'at':'2023-11-14 22:13:20.123'}}");
    tb_record_release(&r);
    r = json_record(TS_FIELDS, "{'id':1,'at':null}");
    apply(chain, &r, 0, NULL);
    assert_null(tb_value_struct_get(r.value.value, "at"));
    tb_record_release(&r);
    tb_chain_destroy(chain);

    /* a formatted string becomes a Timestamp, a Time, a Unix time */
    chain =
        chain_of(CONVERT("Value", "\"transforms.t.target.type\":\"Timestamp\","
                                  "\"transforms.t.format\":\"yyyy-MM-dd'T'HH:mm:ssX\""));
    r = record_of("t", "2023-11-14T22:13:20Z");
    apply(chain, &r, 0, NULL);
    assert_true(tb_schema_is_logical(r.value.schema, TB_LOGICAL_TIMESTAMP));
    assert_int_equal(tb_value_int64(r.value.value), 1700000000000LL);
    tb_record_release(&r);
    r = record_of("t", "14/11/2023");
    apply(chain, &r, -1,
          "Could not parse timestamp: value (14/11/2023) does not match pattern "
          "(yyyy-MM-dd'T'HH:mm:ssX)");
    tb_record_release(&r);
    tb_chain_destroy(chain);

    chain = chain_of(CONVERT("Value", "\"transforms.t.field\":\"at\","
                                      "\"transforms.t.target.type\":\"Time\""));
    r = json_record(TS_FIELDS, "{'id':1,'at':1700000000123}");
    apply(chain, &r, 0, NULL);
    assert_int_equal(tb_value_int64(tb_value_struct_get(r.value.value, "at")), 80000123);
    assert_true(tb_schema_is_logical(tb_schema_field(r.value.schema, "at")->schema,
                                     TB_LOGICAL_TIME));
    tb_record_release(&r);
    tb_chain_destroy(chain);

    chain = chain_of(CONVERT("Value", "\"transforms.t.field\":\"u\","
                                      "\"transforms.t.target.type\":\"Date\","
                                      "\"transforms.t.unix.precision\":\"seconds\""));
    r = json_record(NULL, "{'u':1700000000,'x':1}");
    apply(chain, &r, 0, NULL);
    assert_value(&r, false, "{'u':1699920000000,'x':1}");
    tb_record_release(&r);
    r = json_record(NULL, "{'u':true}");
    apply(chain, &r, -1,
          "TimestampConverter does not support class java.lang.Boolean objects as "
          "timestamps");
    tb_record_release(&r);
    tb_chain_destroy(chain);

    chain = chain_of(CONVERT("Key", "\"transforms.t.target.type\":\"unix\","
                                    "\"transforms.t.unix.precision\":\"microseconds\""));
    r = record_of("t", NULL);
    tb_record_set(&r, TB_SIDE_KEY, tb_schema_timestamp(),
                  tb_value_int(TB_TYPE_INT64, 1700000000123LL));
    apply(chain, &r, 0, NULL);
    assert_int_equal(tb_value_int64(r.key.value), 1700000000123000LL);
    assert_int_equal(tb_schema_type(r.key.schema), TB_TYPE_INT64);
    tb_record_set(&r, TB_SIDE_KEY, tb_schema_new(TB_TYPE_INT32),
                  tb_value_int(TB_TYPE_INT32, 1));
    apply(chain, &r, -1,
          "Schema Schema{INT32} does not correspond to a known timestamp type format");
    tb_record_release(&r);
    tb_chain_destroy(chain);

    json_t *errors =
        validate(CONVERT("Value", "\"transforms.t.target.type\":\"string\""));
    assert_error(errors, "transforms.t.format",
                 "TimestampConverter requires format option to be specified when using "
                 "string timestamps");
    json_decref(errors);
    errors = validate(CONVERT("Value", "\"transforms.t.target.type\":\"Timestamp\","
                                       "\"transforms.t.format\":\"yyyy-qq\""));
    assert_error(errors, "transforms.t.format",
                 "TimestampConverter requires a SimpleDateFormat-compatible pattern for "
                 "string timestamps: yyyy-qq (Illegal pattern character 'q')");
    json_decref(errors);
    errors = validate(CONVERT("Value", "\"transforms.t.target.type\":\"epoch\""));
    assert_error(errors, "transforms.t.target.type",
                 "Invalid value epoch for configuration transforms.t.target.type: String "
                 "must be one of: string, unix, Date, Time, Timestamp");
    json_decref(errors);
}

static void test_date_patterns(void **state)
{
    (void)state;
    char text[128];
    int64_t ms = 0;
    tb_date_format("EEE, d MMM yyyy hh:mm a Z ''X''", -1, text, sizeof(text));
    assert_string_equal(text, "Wed, 31 Dec 1969 11:59 PM +0000 'Z'");
    /* abutting numbers are read with their widths */
    assert_int_equal(tb_date_parse("yyyyMMddHHmm", "202311142213", &ms), 0);
    assert_int_equal(ms, 1699999980000LL);
    assert_int_equal(tb_date_parse("dd MMMM yyyy HH:mm:ss.SSSZ",
                                   "14 November 2023 23:13:20.000+0100", &ms),
                     0);
    assert_int_equal(ms, 1700000000000LL);
    assert_int_equal(tb_date_parse("yyyy-MM-dd", "2023/11/14", &ms), -1);
    char reason[64];
    assert_int_equal(tb_date_format_check("yyyy-ww", reason, sizeof(reason)), -1);
    assert_string_equal(reason, "Illegal pattern character 'w'");
    assert_int_equal(tb_date_format_check("'week' yyyy", reason, sizeof(reason)), 0);
}

static void test_java_numbers(void **state)
{
    (void)state;
    char text[64];
    const struct {
        int64_t unscaled;
        int scale;
        const char *text;
    } decimals[] = {{12345, 2, "123.45"},
                    {-5, 3, "-0.005"},
                    {1, -3, "1E+3"},
                    {12, 9, "1.2E-8"},
                    {7, 0, "7"}};
    for (size_t i = 0; i < sizeof(decimals) / sizeof(decimals[0]); i++) {
        tb_java_decimal_text(decimals[i].unscaled, decimals[i].scale, text, sizeof(text));
        assert_string_equal(text, decimals[i].text);
    }
    int64_t i = 0;
    assert_int_equal(tb_java_parse_int("-128", TB_TYPE_INT8, &i), 0);
    assert_int_equal(i, -128);
    assert_int_equal(tb_java_parse_int("128", TB_TYPE_INT8, &i), -1);
    assert_int_equal(tb_java_parse_int("1.0", TB_TYPE_INT32, &i), -1);
    double d = 0;
    assert_int_equal(tb_java_parse_real(" 2.5f ", &d), 0);
    assert_true(d == 2.5);
    assert_int_equal(tb_java_parse_real("inf", &d), -1);
    assert_int_equal(tb_java_d2i(1e20), INT32_MAX);
    assert_int_equal(tb_java_narrow(TB_TYPE_INT8, 300), 44);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cast_fields_with_schema),
        cmocka_unit_test(test_cast_errors),
        cmocka_unit_test(test_cast_whole_and_schemaless),
        cmocka_unit_test(test_timestamp_converter),
        cmocka_unit_test(test_date_patterns),
        cmocka_unit_test(test_java_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

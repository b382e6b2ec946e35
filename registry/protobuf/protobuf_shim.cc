/*
 * protobuf_shim.cc - tb_protobuf.h over libprotobuf/libprotoc 3.21 (C++): the
 * Protobuf module (tb_protobuf_module.h), which the binary loads when it
 * first compiles a Protobuf schema.
 *
 * libprotoc's compiler::Parser turns .proto text into FileDescriptorProtos;
 * a DescriptorPool per schema builds them with their imports (the
 * registry's references, or libprotobuf's own well-known types); a
 * DynamicMessageFactory over that pool reads and writes messages. Decoding
 * walks the message by reflection to write the JSON form tb_protobuf.h
 * describes; encoding sets the message's fields by reflection from the JSON
 * value, leaving only the well-known types to libprotobuf's
 * JsonStringToMessage.
 *
 * Every function of the module's table catches whatever C++ throws
 * (std::bad_alloc, or libprotobuf's FatalException) and returns it as an
 * error: no exception leaves this file. libprotobuf's own log lines are
 * silenced: every failure reaches the caller as a return value with its
 * reason instead.
 */
#include <cerrno>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>

#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/util/json_util.h>

#include "registry/protobuf/tb_protobuf.h"
#include "registry/protobuf/tb_protobuf_module.h"

extern "C" {
#include "core/tb_base64.h"
#include "core/tb_text.h"
#include "registry/tb_wire.h"
}

namespace pb = google::protobuf;

/* The name the schema's own file has in its pool: not an import path a
 * reference could have. */
static const char MAIN_FILE[] = "<schema>.proto";

struct tb_protobuf_schema {
    /* Declared before factory, so destroyed after it: the factory's
     * prototypes point into the pool. */
    pb::DescriptorPool pool;
    pb::DynamicMessageFactory factory{&pool};
    const pb::FileDescriptor *file = nullptr;
    std::string name; /* the first message's full name; empty when none */
};

namespace
{

void set_error(char *errstr, size_t errstr_size, const std::string &reason)
{
    if (errstr_size > 0) {
        snprintf(errstr, errstr_size, "%s", reason.c_str());
    }
}

/* libprotobuf logs to stderr by default; our callers get every reason as a
 * return value, so its log lines are dropped. Process-wide, set once. */
void quiet_log(pb::LogLevel, const char *, int, const std::string &)
{
}

void silence_protobuf_log()
{
    static std::once_flag once;
    std::call_once(once, [] { pb::SetLogHandler(quiet_log); });
}

/* The first error of libprotoc's tokenizer and parser, with its place. */
class ParseErrors : public pb::io::ErrorCollector
{
  public:
    explicit ParseErrors(const std::string &file) : file_(file)
    {
    }
    void AddError(int line, int column, const std::string &message) override
    {
        if (first_.empty()) {
            first_ = file_ + ":" + std::to_string(line + 1) + ":" +
                     std::to_string(column + 1) + ": " + message;
        }
    }
    const std::string &first() const
    {
        return first_;
    }

  private:
    std::string file_;
    std::string first_;
};

/* The first error of building a file into a pool. */
class BuildErrors : public pb::DescriptorPool::ErrorCollector
{
  public:
    void AddError(const std::string &filename, const std::string &element_name,
                  const pb::Message *, ErrorLocation, const std::string &message) override
    {
        if (first_.empty()) {
            first_ = filename + ": " + element_name + ": " + message;
        }
    }
    const std::string &first() const
    {
        return first_;
    }

  private:
    std::string first_;
};

/* Whether text is base64 (a serialized FileDescriptorProto) rather than
 * .proto text, which always holds a space, ';' or '{'. */
bool is_base64(const std::string &text)
{
    if (text.empty()) {
        return false;
    }
    for (unsigned char ch : text) {
        if (!(isalnum(ch) || ch == '+' || ch == '/' || ch == '=')) {
            return false;
        }
    }
    return true;
}

/* Reads a schema text (.proto or base64 FileDescriptorProto) as file name. */
bool read_file(const std::string &name, const std::string &text,
               pb::FileDescriptorProto *proto, std::string *error)
{
    if (is_base64(text)) {
        std::string bytes(TB_BASE64_DECODED_MAX(text.size()), '\0');
        long n = tb_base64_decode(text.data(), text.size(), TB_BASE64_LENIENT,
                                  reinterpret_cast<uint8_t *>(&bytes[0]), bytes.size());
        if (n < 0 || !proto->ParseFromArray(bytes.data(), static_cast<int>(n))) {
            *error = name + ": neither .proto text nor a base64 FileDescriptorProto";
            return false;
        }
    } else {
        pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
        ParseErrors errors(name);
        pb::io::Tokenizer tokenizer(&input, &errors);
        pb::compiler::Parser parser;
        parser.RecordErrorsTo(&errors);
        if (!parser.Parse(&tokenizer, proto) || !errors.first().empty()) {
            *error =
                errors.first().empty() ? name + ": not a .proto file" : errors.first();
            return false;
        }
    }
    proto->set_name(name);
    return true;
}

/* Builds the pool's files: the schema's own, and what it imports. */
class Builder
{
  public:
    Builder(pb::DescriptorPool *pool,
            std::map<std::string, pb::FileDescriptorProto> *files)
        : pool_(pool), files_(files)
    {
    }

    /* Builds file name after its imports. */
    const pb::FileDescriptor *build(const std::string &name, std::string *error)
    {
        const pb::FileDescriptor *built = pool_->FindFileByName(name);
        if (built != nullptr) {
            return built;
        }
        if (!building_.insert(name).second) {
            *error = "import cycle through " + name;
            return nullptr;
        }
        pb::FileDescriptorProto proto;
        auto found = files_->find(name);
        if (found != files_->end()) {
            proto = found->second;
        } else {
            const pb::FileDescriptor *known =
                name.rfind("google/protobuf/", 0) == 0
                    ? pb::DescriptorPool::generated_pool()->FindFileByName(name)
                    : nullptr;
            if (known == nullptr) {
                *error = "import \"" + name + "\" is not among the schema's references";
                return nullptr;
            }
            known->CopyTo(&proto);
        }
        for (const std::string &dependency : proto.dependency()) {
            if (build(dependency, error) == nullptr) {
                return nullptr;
            }
        }
        BuildErrors errors;
        built = pool_->BuildFileCollectingErrors(proto, &errors);
        if (built == nullptr) {
            *error = errors.first().empty() ? name + ": invalid" : errors.first();
        }
        building_.erase(name);
        return built;
    }

  private:
    pb::DescriptorPool *pool_;
    std::map<std::string, pb::FileDescriptorProto> *files_;
    std::set<std::string> building_;
};

tb_protobuf_schema_t *compile(const char *text, const json_t *references,
                              std::string *error)
{
    std::map<std::string, pb::FileDescriptorProto> files;
    const char *name;
    json_t *value;

    if (!read_file(MAIN_FILE, text, &files[MAIN_FILE], error)) {
        return nullptr;
    }
    json_object_foreach (const_cast<json_t *>(references), name, value) {
        if (!json_is_string(value)) {
            *error = std::string("reference ") + name + " has no schema text";
            return nullptr;
        }
        if (!read_file(name, json_string_value(value), &files[name], error)) {
            return nullptr;
        }
    }
    std::unique_ptr<tb_protobuf_schema_t> schema(new tb_protobuf_schema_t());
    Builder builder(&schema->pool, &files);
    schema->file = builder.build(MAIN_FILE, error);
    if (schema->file == nullptr) {
        return nullptr;
    }
    if (schema->file->message_type_count() > 0) {
        schema->name = schema->file->message_type(0)->full_name();
    }
    return schema.release();
}

/* ---------------------------------------------------------------------------
 * Decoding: a message -> JSON text, by reflection
 */

void put_base64(tb_buf_t *out, const std::string &bytes)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *s = reinterpret_cast<const unsigned char *>(bytes.data());
    size_t n = bytes.size();
    tb_buf_putc(out, '"');
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = static_cast<uint32_t>(s[i]) << 16;
        if (i + 1 < n) {
            v |= static_cast<uint32_t>(s[i + 1]) << 8;
        }
        if (i + 2 < n) {
            v |= s[i + 2];
        }
        char quad[4] = {alphabet[(v >> 18) & 63], alphabet[(v >> 12) & 63],
                        i + 1 < n ? alphabet[(v >> 6) & 63] : '=',
                        i + 2 < n ? alphabet[v & 63] : '='};
        tb_buf_append(out, quad, sizeof(quad));
    }
    tb_buf_putc(out, '"');
}

/* The shortest spelling that reads back as v; NaN and the infinities as text. */
void put_real(tb_buf_t *out, double v, bool single)
{
    if (std::isnan(v)) {
        tb_buf_puts(out, "\"NaN\"");
    } else if (std::isinf(v)) {
        tb_buf_puts(out, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    } else {
        tb_text_real(out, v, single);
    }
}

class Writer
{
  public:
    explicit Writer(tb_buf_t *out) : out_(out)
    {
    }

    bool message(const pb::Message &m)
    {
        const pb::Descriptor *d = m.GetDescriptor();
        if (d->well_known_type() != pb::Descriptor::WELLKNOWNTYPE_UNSPECIFIED) {
            return well_known(m);
        }
        const pb::Reflection *r = m.GetReflection();
        bool first = true;
        tb_buf_putc(out_, '{');
        for (int i = 0; i < d->field_count(); i++) {
            const pb::FieldDescriptor *f = d->field(i);
            bool set = f->is_repeated() || r->HasField(m, f);
            if (!set && f->real_containing_oneof() != nullptr) {
                continue; /* a oneof shows its set member only */
            }
            if (!first) {
                tb_buf_putc(out_, ',');
            }
            first = false;
            tb_buf_json_string(out_, f->name().data(), f->name().size());
            tb_buf_putc(out_, ':');
            bool ok;
            if (f->is_map()) {
                ok = map(m, f);
            } else if (f->is_repeated()) {
                ok = repeated(m, f);
            } else if (!set && f->has_presence()) {
                tb_buf_puts(out_, "null");
                ok = true;
            } else {
                ok = value(m, f, -1);
            }
            if (!ok) {
                return false;
            }
        }
        tb_buf_putc(out_, '}');
        return true;
    }

    const std::string &error() const
    {
        return error_;
    }

  private:
    /* google.protobuf.* messages: Protobuf's own JSON mapping. */
    bool well_known(const pb::Message &m)
    {
        pb::util::JsonPrintOptions options;
        options.preserve_proto_field_names = true;
        options.always_print_primitive_fields = true;
        std::string json;
        pb::util::Status status = pb::util::MessageToJsonString(m, &json, options);
        if (!status.ok()) {
            error_ = m.GetDescriptor()->full_name() + ": " +
                     std::string(status.message().data(), status.message().size());
            return false;
        }
        tb_buf_append(out_, json.data(), json.size());
        return true;
    }

    bool repeated(const pb::Message &m, const pb::FieldDescriptor *f)
    {
        int n = m.GetReflection()->FieldSize(m, f);
        tb_buf_putc(out_, '[');
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                tb_buf_putc(out_, ',');
            }
            if (!value(m, f, i)) {
                return false;
            }
        }
        tb_buf_putc(out_, ']');
        return true;
    }

    bool map(const pb::Message &m, const pb::FieldDescriptor *f)
    {
        const pb::Reflection *r = m.GetReflection();
        const pb::FieldDescriptor *key = f->message_type()->map_key();
        const pb::FieldDescriptor *val = f->message_type()->map_value();
        int n = r->FieldSize(m, f);
        tb_buf_putc(out_, '{');
        for (int i = 0; i < n; i++) {
            const pb::Message &entry = r->GetRepeatedMessage(m, f, i);
            if (i > 0) {
                tb_buf_putc(out_, ',');
            }
            if (key->cpp_type() == pb::FieldDescriptor::CPPTYPE_STRING) {
                if (!value(entry, key, -1)) {
                    return false;
                }
            } else {
                tb_buf_putc(out_, '"');
                if (!value(entry, key, -1)) {
                    return false;
                }
                tb_buf_putc(out_, '"');
            }
            tb_buf_putc(out_, ':');
            if (!value(entry, val, -1)) {
                return false;
            }
        }
        tb_buf_putc(out_, '}');
        return true;
    }

    /* Field f of m (element i when repeated, else i < 0). */
    bool value(const pb::Message &m, const pb::FieldDescriptor *f, int i)
    {
        const pb::Reflection *r = m.GetReflection();
        bool rep = i >= 0;
        switch (f->cpp_type()) {
        case pb::FieldDescriptor::CPPTYPE_INT32:
            tb_buf_printf(
                out_, "%d",
                static_cast<int>(rep ? r->GetRepeatedInt32(m, f, i) : r->GetInt32(m, f)));
            return true;
        case pb::FieldDescriptor::CPPTYPE_INT64:
            tb_buf_printf(out_, "%lld",
                          static_cast<long long>(rep ? r->GetRepeatedInt64(m, f, i)
                                                     : r->GetInt64(m, f)));
            return true;
        case pb::FieldDescriptor::CPPTYPE_UINT32:
            tb_buf_printf(out_, "%u",
                          static_cast<unsigned>(rep ? r->GetRepeatedUInt32(m, f, i)
                                                    : r->GetUInt32(m, f)));
            return true;
        case pb::FieldDescriptor::CPPTYPE_UINT64:
            tb_buf_printf(out_, "%llu",
                          static_cast<unsigned long long>(
                              rep ? r->GetRepeatedUInt64(m, f, i) : r->GetUInt64(m, f)));
            return true;
        case pb::FieldDescriptor::CPPTYPE_DOUBLE:
            put_real(out_, rep ? r->GetRepeatedDouble(m, f, i) : r->GetDouble(m, f), false);
            return true;
        case pb::FieldDescriptor::CPPTYPE_FLOAT:
            put_real(out_, rep ? r->GetRepeatedFloat(m, f, i) : r->GetFloat(m, f), true);
            return true;
        case pb::FieldDescriptor::CPPTYPE_BOOL:
            tb_buf_puts(out_, (rep ? r->GetRepeatedBool(m, f, i) : r->GetBool(m, f))
                                  ? "true"
                                  : "false");
            return true;
        case pb::FieldDescriptor::CPPTYPE_ENUM: {
            int number = rep ? r->GetRepeatedEnumValue(m, f, i) : r->GetEnumValue(m, f);
            const pb::EnumValueDescriptor *e = f->enum_type()->FindValueByNumber(number);
            if (e != nullptr) {
                tb_buf_json_string(out_, e->name().data(), e->name().size());
            } else {
                tb_buf_printf(out_, "%d", number);
            }
            return true;
        }
        case pb::FieldDescriptor::CPPTYPE_STRING: {
            std::string scratch;
            const std::string &s = rep ? r->GetRepeatedStringReference(m, f, i, &scratch)
                                       : r->GetStringReference(m, f, &scratch);
            if (f->type() == pb::FieldDescriptor::TYPE_BYTES) {
                put_base64(out_, s);
                return true;
            }
            if (!tb_text_utf8_valid(reinterpret_cast<const uint8_t *>(s.data()),
                                    s.size())) {
                error_ = "field " + f->full_name() + " holds a string that is not UTF-8";
                return false;
            }
            tb_buf_json_string(out_, s.data(), s.size());
            return true;
        }
        case pb::FieldDescriptor::CPPTYPE_MESSAGE:
            return message(rep ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f));
        }
        error_ = "field " + f->full_name() + " has a type this decoder does not know";
        return false;
    }

    tb_buf_t *out_;
    std::string error_;
};

/* The message at the Confluent message-index path. */
const pb::Descriptor *message_at(const tb_protobuf_schema_t *schema,
                                 const int32_t *indexes, size_t count, std::string *error)
{
    std::string path;
    for (size_t k = 0; k < count; k++) {
        path += (k > 0 ? "," : "") + std::to_string(indexes[k]);
    }
    const pb::Descriptor *d = nullptr;
    for (size_t k = 0; k < count; k++) {
        int n =
            d == nullptr ? schema->file->message_type_count() : d->nested_type_count();
        if (indexes[k] >= n) {
            *error = "message index [" + path + "] is not in the schema (" +
                     (d == nullptr ? std::string("the file") : d->full_name()) + " has " +
                     std::to_string(n) + " message(s) at that level)";
            return nullptr;
        }
        d = d == nullptr ? schema->file->message_type(indexes[k])
                         : d->nested_type(indexes[k]);
    }
    return d;
}

int decode(const tb_protobuf_schema_t *schema, const uint8_t *payload, size_t len,
           tb_buf_t *out, std::string *error)
{
    int32_t indexes[TB_WIRE_MAX_INDEXES];
    size_t count, used;
    char reason[256];

    if (tb_wire_read_indexes(payload, len, indexes, &count, &used, reason,
                             sizeof(reason)) != 0) {
        *error = reason;
        return -1;
    }
    const pb::Descriptor *d = message_at(schema, indexes, count, error);
    if (d == nullptr) {
        return -1;
    }
    if (len - used > static_cast<size_t>(INT32_MAX)) {
        *error = "the message is larger than 2 GiB";
        return -1;
    }
    const pb::Message *prototype =
        const_cast<tb_protobuf_schema_t *>(schema)->factory.GetPrototype(d);
    std::unique_ptr<pb::Message> message(prototype->New());
    if (!message->ParsePartialFromArray(payload + used, static_cast<int>(len - used))) {
        *error = "the bytes are not a valid " + d->full_name() + " message";
        return -1;
    }
    if (!message->IsInitialized()) {
        *error = d->full_name() +
                 " lacks required fields: " + message->InitializationErrorString();
        return -1;
    }
    Writer writer(out);
    if (!writer.message(*message)) {
        *error = writer.error();
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------------------
 * Encoding: JSON -> a message, by reflection
 */

/* Sets a message's fields from a JSON value, as Protobuf's JSON mapping
 * reads it (tb_protobuf.h). The well-known types (Timestamp, Duration,
 * wrappers, Struct, Any, ...) are handed to libprotobuf's own JSON parser,
 * which builds a type resolver per call: doing the rest here is several
 * times faster. */
class Reader
{
  public:
    explicit Reader(std::string *error) : error_(error)
    {
    }

    bool message(const json_t *value, pb::Message *m)
    {
        const pb::Descriptor *d = m->GetDescriptor();
        if (d->well_known_type() != pb::Descriptor::WELLKNOWNTYPE_UNSPECIFIED) {
            return well_known(value, m);
        }
        if (!json_is_object(value)) {
            return fail(d->full_name() + " is a JSON object");
        }
        const char *key;
        json_t *member;
        json_object_foreach ((json_t *)value, key, member) {
            const pb::FieldDescriptor *f = field_named(d, key);
            if (f == nullptr) {
                return fail(d->full_name() + " has no field " + key);
            }
            if (!json_is_null(member) || is_value_type(f)) {
                if (!field(f, member, m)) {
                    return fail(std::string("field ") + f->name() + ": " + *error_, true);
                }
            }
        }
        return true;
    }

  private:
    std::string *error_;

    bool fail(const std::string &reason, bool replace = false)
    {
        if (replace || error_->empty()) {
            *error_ = reason;
        }
        return false;
    }

    /* By its name in the .proto, or its JSON (lowerCamelCase) name. */
    static const pb::FieldDescriptor *field_named(const pb::Descriptor *d, const char *key)
    {
        const pb::FieldDescriptor *f = d->FindFieldByName(key);
        for (int i = 0; f == nullptr && i < d->field_count(); i++) {
            if (d->field(i)->json_name() == key) {
                f = d->field(i);
            }
        }
        return f;
    }

    /* google.protobuf.Value: its JSON null is a value, not an absence. */
    static bool is_value_type(const pb::FieldDescriptor *f)
    {
        return f->message_type() != nullptr &&
               f->message_type()->well_known_type() == pb::Descriptor::WELLKNOWNTYPE_VALUE;
    }

    bool well_known(const json_t *value, pb::Message *m)
    {
        char *text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
        if (text == nullptr) {
            return fail("out of memory");
        }
        pb::util::JsonParseOptions options;
        options.ignore_unknown_fields = false;
        pb::util::Status status = pb::util::JsonStringToMessage(text, m, options);
        free(text);
        if (!status.ok()) {
            return fail(std::string(status.message().data(), status.message().size()));
        }
        return true;
    }

    bool field(const pb::FieldDescriptor *f, const json_t *value, pb::Message *m)
    {
        if (f->is_map()) {
            return map(f, value, m);
        }
        if (f->is_repeated()) {
            if (!json_is_array(value)) {
                return fail("a repeated field is a JSON array");
            }
            for (size_t i = 0; i < json_array_size(value); i++) {
                const json_t *item = json_array_get(value, i);
                if (json_is_null(item) && !is_value_type(f)) {
                    return fail("null in a repeated field");
                }
                if (!single(f, item, m)) {
                    return false;
                }
            }
            return true;
        }
        const pb::OneofDescriptor *oneof = f->containing_oneof();
        const pb::Reflection *r = m->GetReflection();
        if (oneof != nullptr && r->HasOneof(*m, oneof) &&
            r->GetOneofFieldDescriptor(*m, oneof) != f) {
            return fail("oneof " + oneof->name() + " already has a member set");
        }
        return single(f, value, m);
    }

    /* A map is a repeated entry message {key = 1, value = 2}. */
    bool map(const pb::FieldDescriptor *f, const json_t *value, pb::Message *m)
    {
        if (!json_is_object(value)) {
            return fail("a map field is a JSON object");
        }
        const char *key;
        json_t *item;
        json_object_foreach ((json_t *)value, key, item) {
            pb::Message *entry = m->GetReflection()->AddMessage(m, f);
            const pb::FieldDescriptor *key_field = entry->GetDescriptor()->map_key();
            const pb::FieldDescriptor *value_field = entry->GetDescriptor()->map_value();
            json_t *key_text = json_string(key);
            bool ok = key_text != nullptr && map_key(key_field, key_text, entry) &&
                      (!json_is_null(item) || is_value_type(value_field)) &&
                      single(value_field, item, entry);
            json_decref(key_text);
            if (!ok) {
                return fail("map value for key " + std::string(key) + " does not fit");
            }
        }
        return true;
    }

    /* Map keys are JSON strings whatever their type. */
    bool map_key(const pb::FieldDescriptor *f, const json_t *key, pb::Message *entry)
    {
        if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_BOOL) {
            return single(f, key, entry);
        }
        const char *text = json_string_value(key);
        if (strcmp(text, "true") != 0 && strcmp(text, "false") != 0) {
            return fail("a bool map key is \"true\" or \"false\"");
        }
        entry->GetReflection()->SetBool(entry, f, text[0] == 't');
        return true;
    }

    /* An integer from a JSON integer, an integral real, or decimal text. */
    bool integer(const json_t *value, long long min, long long max, long long *out)
    {
        long long v;
        if (json_is_integer(value)) {
            v = json_integer_value(value);
        } else if (json_is_real(value)) {
            double d = json_real_value(value);
            /* [-2^63, 2^63): where the conversion is defined */
            if (d != std::floor(d) || d < -9223372036854775808.0 ||
                d >= 9223372036854775808.0) {
                return fail("not an integer");
            }
            v = static_cast<long long>(d);
        } else if (json_is_string(value)) {
            const char *text = json_string_value(value);
            char *end;
            errno = 0;
            v = strtoll(text, &end, 10);
            if (*text == '\0' || *end != '\0' || errno != 0) {
                return fail("not an integer");
            }
        } else {
            return fail("not an integer");
        }
        if (v < min || v > max) {
            return fail("out of range");
        }
        *out = v;
        return true;
    }

    bool unsigned_integer(const json_t *value, unsigned long long max,
                          unsigned long long *out)
    {
        if (json_is_string(value)) {
            const char *text = json_string_value(value);
            char *end;
            errno = 0;
            unsigned long long v = strtoull(text, &end, 10);
            if (*text == '\0' || *text == '-' || *end != '\0' || errno != 0 || v > max) {
                return fail("not an unsigned integer in range");
            }
            *out = v;
            return true;
        }
        long long v;
        if (!integer(value, 0, LLONG_MAX, &v) || static_cast<unsigned long long>(v) > max) {
            return fail("not an unsigned integer in range", true);
        }
        *out = static_cast<unsigned long long>(v);
        return true;
    }

    /* A number, "NaN", "Infinity", "-Infinity", or decimal text. */
    bool real(const json_t *value, double *out)
    {
        if (json_is_number(value)) {
            *out = json_number_value(value);
            return true;
        }
        const char *text = json_string_value(value);
        if (text == nullptr) {
            return fail("not a number");
        }
        if (strcmp(text, "NaN") == 0) {
            *out = std::nan("");
        } else if (strcmp(text, "Infinity") == 0 || strcmp(text, "-Infinity") == 0) {
            *out = text[0] == '-' ? -HUGE_VAL : HUGE_VAL;
        } else {
            char *end;
            *out = strtod(text, &end);
            if (*text == '\0' || *end != '\0') {
                return fail("not a number");
            }
        }
        return true;
    }

    bool single(const pb::FieldDescriptor *f, const json_t *value, pb::Message *m)
    {
        const pb::Reflection *r = m->GetReflection();
        const bool rep = f->is_repeated();
        long long i;
        unsigned long long u;
        double d;
        switch (f->cpp_type()) {
        case pb::FieldDescriptor::CPPTYPE_INT32:
            if (!integer(value, INT32_MIN, INT32_MAX, &i)) {
                return false;
            }
            rep ? r->AddInt32(m, f, static_cast<int32_t>(i))
                : r->SetInt32(m, f, static_cast<int32_t>(i));
            return true;
        case pb::FieldDescriptor::CPPTYPE_INT64:
            if (!integer(value, LLONG_MIN, LLONG_MAX, &i)) {
                return false;
            }
            rep ? r->AddInt64(m, f, i) : r->SetInt64(m, f, i);
            return true;
        case pb::FieldDescriptor::CPPTYPE_UINT32:
            if (!unsigned_integer(value, UINT32_MAX, &u)) {
                return false;
            }
            rep ? r->AddUInt32(m, f, static_cast<uint32_t>(u))
                : r->SetUInt32(m, f, static_cast<uint32_t>(u));
            return true;
        case pb::FieldDescriptor::CPPTYPE_UINT64:
            if (!unsigned_integer(value, ULLONG_MAX, &u)) {
                return false;
            }
            rep ? r->AddUInt64(m, f, u) : r->SetUInt64(m, f, u);
            return true;
        case pb::FieldDescriptor::CPPTYPE_DOUBLE:
            if (!real(value, &d)) {
                return false;
            }
            rep ? r->AddDouble(m, f, d) : r->SetDouble(m, f, d);
            return true;
        case pb::FieldDescriptor::CPPTYPE_FLOAT:
            if (!real(value, &d)) {
                return false;
            }
            if (std::isfinite(d) && std::fabs(d) > FLT_MAX) {
                return fail("out of range for a float");
            }
            rep ? r->AddFloat(m, f, static_cast<float>(d))
                : r->SetFloat(m, f, static_cast<float>(d));
            return true;
        case pb::FieldDescriptor::CPPTYPE_BOOL:
            if (!json_is_boolean(value)) {
                return fail("not true or false");
            }
            rep ? r->AddBool(m, f, json_is_true(value)) : r->SetBool(m, f, json_is_true(value));
            return true;
        case pb::FieldDescriptor::CPPTYPE_STRING:
            return string_or_bytes(f, value, m);
        case pb::FieldDescriptor::CPPTYPE_ENUM:
            return enumeration(f, value, m);
        case pb::FieldDescriptor::CPPTYPE_MESSAGE:
            return message(value, rep ? r->AddMessage(m, f) : r->MutableMessage(m, f));
        }
        return fail("unsupported field type");
    }

    bool string_or_bytes(const pb::FieldDescriptor *f, const json_t *value, pb::Message *m)
    {
        const pb::Reflection *r = m->GetReflection();
        if (!json_is_string(value)) {
            return fail("not a JSON string");
        }
        std::string text(json_string_value(value), json_string_length(value));
        if (f->type() == pb::FieldDescriptor::TYPE_BYTES) {
            std::string bytes(TB_BASE64_DECODED_MAX(text.size()), '\0');
            long n = tb_base64_decode(text.data(), text.size(), TB_BASE64_LENIENT,
                                      reinterpret_cast<uint8_t *>(&bytes[0]), bytes.size());
            if (n < 0) {
                return fail("not base64");
            }
            bytes.resize(static_cast<size_t>(n));
            text.swap(bytes);
        }
        f->is_repeated() ? r->AddString(m, f, text) : r->SetString(m, f, text);
        return true;
    }

    /* By name, or by number (any number in an open proto3 enum). */
    bool enumeration(const pb::FieldDescriptor *f, const json_t *value, pb::Message *m)
    {
        const pb::Reflection *r = m->GetReflection();
        const pb::EnumDescriptor *e = f->enum_type();
        int number;
        if (json_is_string(value)) {
            const pb::EnumValueDescriptor *v = e->FindValueByName(json_string_value(value));
            if (v == nullptr) {
                return fail(e->full_name() + " has no value " + json_string_value(value));
            }
            number = v->number();
        } else {
            long long i;
            if (!integer(value, INT32_MIN, INT32_MAX, &i)) {
                return false;
            }
            number = static_cast<int>(i);
            bool open = e->file()->syntax() == pb::FileDescriptor::SYNTAX_PROTO3;
            if (!open && e->FindValueByNumber(number) == nullptr) {
                return fail(e->full_name() + " has no value " + std::to_string(number));
            }
        }
        f->is_repeated() ? r->AddEnumValue(m, f, number) : r->SetEnumValue(m, f, number);
        return true;
    }
};

int encode(const tb_protobuf_schema_t *schema, const json_t *value, tb_buf_t *out,
           std::string *error)
{
    if (schema->file->message_type_count() == 0) {
        *error = "the schema has no message";
        return -1;
    }
    if (!json_is_object(value)) {
        *error = "a Protobuf message is a JSON object";
        return -1;
    }
    const pb::Descriptor *d = schema->file->message_type(0);
    const pb::Message *prototype =
        const_cast<tb_protobuf_schema_t *>(schema)->factory.GetPrototype(d);
    std::unique_ptr<pb::Message> message(prototype->New());
    std::string reason;
    if (!Reader(&reason).message(value, message.get())) {
        *error = "the value does not fit " + d->full_name() + ": " + reason;
        return -1;
    }
    if (!message->IsInitialized()) {
        *error = d->full_name() +
                 " lacks required fields: " + message->InitializationErrorString();
        return -1;
    }
    std::string bytes;
    if (!message->SerializeToString(&bytes)) {
        *error = d->full_name() + " cannot be serialized (larger than 2 GiB?)";
        return -1;
    }
    const int32_t first[1] = {0};
    tb_wire_write_indexes(out, first, 1);
    tb_buf_append(out, bytes.data(), bytes.size());
    return 0;
}

/* Runs body(&error): 0, or -1 with errstr set from error or from whatever
 * libprotobuf threw. */
/* -------------------------------------------------------------------------
 * Describing a message for the converters' Connect schemas
 */

#define MAX_DESCRIBED_DEPTH 32

json_t *describe_message(const pb::Descriptor *d, int depth, std::string *error);

json_t *describe_field(const pb::FieldDescriptor *f, int depth, std::string *error)
{
    json_t *field = json_pack(
        "{s:s, s:s, s:b, s:b}", "name", f->name().c_str(), "type", f->type_name(),
        "repeated", f->is_repeated() && !f->is_map(), "presence", f->has_presence());
    json_t *inner = nullptr;
    if (field == nullptr) {
        throw std::bad_alloc();
    }
    if (f->is_map()) {
        json_t *key = describe_field(f->message_type()->map_key(), depth + 1, error);
        json_t *value = key != nullptr ? describe_field(f->message_type()->map_value(),
                                                        depth + 1, error)
                                       : nullptr;
        inner = value != nullptr ? json_pack("{s:o, s:o}", "key", key, "value", value)
                                 : nullptr;
        if (value == nullptr) {
            json_decref(key);
        }
        if (inner != nullptr) {
            json_object_set_new(field, "map", inner);
        }
    } else if (f->message_type() != nullptr) {
        inner = describe_message(f->message_type(), depth + 1, error);
        if (inner != nullptr) {
            json_object_set_new(field, "message", inner);
        }
    } else {
        if (f->enum_type() != nullptr) {
            json_object_set_new(field, "enum",
                                json_string(f->enum_type()->full_name().c_str()));
        }
        return field;
    }
    if (inner == nullptr) {
        json_decref(field);
        return nullptr;
    }
    return field;
}

json_t *describe_message(const pb::Descriptor *d, int depth, std::string *error)
{
    if (depth > MAX_DESCRIBED_DEPTH) {
        *error = "message " + d->full_name() +
                 " nests too deeply (a recursive message has no Connect form)";
        return nullptr;
    }
    json_t *fields = json_array();
    json_t *message =
        json_pack("{s:s, s:o}", "name", d->full_name().c_str(), "fields", fields);
    if (message == nullptr) {
        throw std::bad_alloc();
    }
    for (int i = 0; i < d->field_count(); i++) {
        json_t *field = describe_field(d->field(i), depth, error);
        if (field == nullptr) {
            json_decref(message);
            return nullptr;
        }
        json_array_append_new(fields, field);
    }
    return message;
}

template <typename Body> int guarded(char *errstr, size_t errstr_size, Body body)
{
    try {
        std::string error;
        if (body(&error) == 0) {
            return 0;
        }
        set_error(errstr, errstr_size, error);
    } catch (const std::bad_alloc &) {
        set_error(errstr, errstr_size, "out of memory");
    } catch (const std::exception &e) {
        set_error(errstr, errstr_size, std::string("libprotobuf: ") + e.what());
    } catch (...) {
        set_error(errstr, errstr_size, "libprotobuf failed");
    }
    return -1;
}

} // namespace

/* ---------------------------------------------------------------------------
 * The module's table: nothing thrown gets past these.
 */

namespace
{

tb_protobuf_schema_t *schema_create(const char *text, const json_t *references,
                                    char *errstr, size_t errstr_size)
{
    tb_protobuf_schema_t *schema = nullptr;
    guarded(errstr, errstr_size, [&](std::string *error) {
        silence_protobuf_log();
        schema = compile(text, references, error);
        return schema != nullptr ? 0 : -1;
    });
    return schema;
}

void schema_destroy(tb_protobuf_schema_t *schema)
{
    delete schema;
}

const char *schema_name(const tb_protobuf_schema_t *schema)
{
    return schema->name.empty() ? nullptr : schema->name.c_str();
}

int decode_payload(const tb_protobuf_schema_t *schema, const uint8_t *payload, size_t len,
                   tb_buf_t *out, char *errstr, size_t errstr_size)
{
    return guarded(errstr, errstr_size, [&](std::string *error) {
        return decode(schema, payload, len, out, error);
    });
}

int encode_value(const tb_protobuf_schema_t *schema, const json_t *value, tb_buf_t *out,
                 char *errstr, size_t errstr_size)
{
    return guarded(errstr, errstr_size,
                   [&](std::string *error) { return encode(schema, value, out, error); });
}

json_t *describe_indexes(const tb_protobuf_schema_t *schema, const int32_t *indexes,
                         size_t count, char *errstr, size_t errstr_size)
{
    json_t *description = nullptr;
    guarded(errstr, errstr_size, [&](std::string *error) {
        const pb::Descriptor *d = message_at(schema, indexes, count, error);
        if (d == nullptr && error->empty()) {
            *error = "the message indexes pick no message";
        }
        description = d != nullptr ? describe_message(d, 0, error) : nullptr;
        return description != nullptr ? 0 : -1;
    });
    return description;
}

} // namespace

/* The module's one export (tb_protobuf_module.h). */
extern "C" __attribute__((visibility("default"))) const tb_protobuf_module_t
    tb_protobuf_module = {schema_create,  schema_destroy, schema_name,
                          decode_payload, encode_value,   describe_indexes};

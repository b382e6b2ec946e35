/*
 * protobuf_shim.cc - tb_protobuf.h over libprotobuf/libprotoc 3.21 (C++).
 *
 * libprotoc's compiler::Parser turns .proto text into FileDescriptorProtos;
 * a DescriptorPool per schema builds them with their imports (the
 * registry's references, or libprotobuf's own well-known types); a
 * DynamicMessageFactory over that pool reads and writes messages. Decoding
 * walks the message by reflection to write the JSON form tb_protobuf.h
 * describes; encoding is libprotobuf's JsonStringToMessage.
 *
 * Every extern "C" function catches whatever C++ throws (std::bad_alloc, or
 * libprotobuf's FatalException) and returns it as an error: no exception
 * leaves this file. libprotobuf's own log lines are silenced: every failure
 * reaches the caller as a return value with its reason instead.
 */
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

#include "registry/tb_protobuf.h"

extern "C" {
#include "registry/tb_text.h"
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
        std::string bytes(text.size() / 4 * 3 + 3, '\0');
        int n = tb_text_base64_decode(text.data(), text.size(),
                                      reinterpret_cast<uint8_t *>(&bytes[0]));
        if (n < 0 || !proto->ParseFromArray(bytes.data(), n)) {
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
 * Encoding: JSON -> the first message
 */

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
    char *text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
    if (text == nullptr) {
        *error = "out of memory";
        return -1;
    }
    std::string json(text);
    free(text);
    const pb::Message *prototype =
        const_cast<tb_protobuf_schema_t *>(schema)->factory.GetPrototype(d);
    std::unique_ptr<pb::Message> message(prototype->New());
    pb::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    pb::util::Status status = pb::util::JsonStringToMessage(json, message.get(), options);
    if (!status.ok()) {
        *error = "the value does not fit " + d->full_name() + ": " +
                 std::string(status.message().data(), status.message().size());
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
 * The C API: nothing thrown gets past these.
 */

extern "C" tb_protobuf_schema_t *tb_protobuf_schema_create(const char *text,
                                                           const json_t *references,
                                                           char *errstr,
                                                           size_t errstr_size)
{
    tb_protobuf_schema_t *schema = nullptr;
    guarded(errstr, errstr_size, [&](std::string *error) {
        silence_protobuf_log();
        schema = compile(text, references, error);
        return schema != nullptr ? 0 : -1;
    });
    return schema;
}

extern "C" void tb_protobuf_schema_destroy(tb_protobuf_schema_t *schema)
{
    delete schema;
}

extern "C" const char *tb_protobuf_schema_name(const tb_protobuf_schema_t *schema)
{
    return schema->name.empty() ? nullptr : schema->name.c_str();
}

extern "C" int tb_protobuf_decode(const tb_protobuf_schema_t *schema,
                                  const uint8_t *payload, size_t len, tb_buf_t *out,
                                  char *errstr, size_t errstr_size)
{
    return guarded(errstr, errstr_size, [&](std::string *error) {
        return decode(schema, payload, len, out, error);
    });
}

extern "C" int tb_protobuf_encode(const tb_protobuf_schema_t *schema, const json_t *value,
                                  tb_buf_t *out, char *errstr, size_t errstr_size)
{
    return guarded(errstr, errstr_size,
                   [&](std::string *error) { return encode(schema, value, out, error); });
}

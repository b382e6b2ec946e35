#include "connectors/runtime/source/eos/tb_eos_offsets.h"

#define GENERATION_KEY "tributary.offsets.generation"
#define TASK_KEY "tributary.exactly.once.task"

bool tb_eos_offsets_is_reserved(const json_t *partition)
{
    return json_object_size(partition) == 1 &&
           (json_object_get(partition, GENERATION_KEY) != NULL ||
            json_object_get(partition, TASK_KEY) != NULL);
}

int64_t tb_eos_offsets_generation_in(const json_t *offset)
{
    return json_integer_value(json_object_get(offset, "generation"));
}

int64_t tb_eos_offsets_generation_of(const json_t *stored)
{
    size_t i;
    json_t *entry;
    json_array_foreach ((json_t *)stored, i, entry) {
        json_t *partition = json_object_get(entry, "partition");
        if (json_object_size(partition) == 1 &&
            json_object_get(partition, GENERATION_KEY) != NULL) {
            return tb_eos_offsets_generation_in(json_object_get(entry, "offset"));
        }
    }
    return 0;
}

json_t *tb_eos_offsets_generation_partition(void)
{
    return json_pack("{s:b}", GENERATION_KEY, 1);
}

json_t *tb_eos_offsets_generation_entry(int64_t generation)
{
    return json_pack("{s:o, s:{s:I}}", "partition", tb_eos_offsets_generation_partition(),
                     "offset", "generation", (json_int_t)generation);
}

json_t *tb_eos_offsets_task_partition(int task)
{
    return json_pack("{s:i}", TASK_KEY, task);
}

int tb_eos_offsets_task_of(const json_t *partition)
{
    json_t *task = json_object_get(partition, TASK_KEY);
    return json_object_size(partition) == 1 && json_is_integer(task)
               ? (int)json_integer_value(task)
               : -1;
}

json_t *tb_eos_offsets_task_offset(int64_t transactions, int64_t generation)
{
    return json_pack("{s:I, s:I}", "transactions", (json_int_t)transactions, "generation",
                     (json_int_t)generation);
}

int64_t tb_eos_offsets_task_transactions(const json_t *offset)
{
    return json_integer_value(json_object_get(offset, "transactions"));
}

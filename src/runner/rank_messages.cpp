#include "runner/rank_messages.hpp"

#include <cstring>
#include <iterator>

#include "core/error.hpp"

namespace pemc::runner {

std::string with_int_prefix(std::initializer_list<std::int32_t> ints, const std::string& payload) {
  std::string bytes(ints.size() * sizeof(std::int32_t), '\0');
  std::memcpy(bytes.data(), std::data(ints), bytes.size());
  return bytes + payload;
}

std::int32_t int_prefix(const std::string& bytes, std::size_t i) {
  if (bytes.size() < (i + 1) * sizeof(std::int32_t))
    throw IoError("malformed round message (" + std::to_string(bytes.size()) + " bytes)");
  std::int32_t v = 0;
  std::memcpy(&v, bytes.data() + i * sizeof v, sizeof v);
  return v;
}

std::string after_int_prefix(const std::string& bytes, std::size_t n) {
  if (n > 0) (void)int_prefix(bytes, n - 1);
  return bytes.substr(n * sizeof(std::int32_t));
}

std::string encode_task(int item) {
  std::string bytes(sizeof item, '\0');
  std::memcpy(bytes.data(), &item, sizeof item);
  return bytes;
}

int decode_task(const std::string& bytes) {
  int item = -1;
  std::memcpy(&item, bytes.data(), sizeof item);
  return item;
}

}  // namespace pemc::runner

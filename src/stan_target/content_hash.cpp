#include "stan_target/content_hash.hpp"

#include <cstdio>
#include <fstream>
#include <vector>

namespace pemc::stan_target {

void ContentHash::add_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    add("missing file: " + path);
    return;
  }
  std::vector<char> buffer(1 << 16);
  std::string all;
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0)
    all.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
  add(all);
}

std::string ContentHash::hex() const {
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(a_),
                static_cast<unsigned long long>(b_));
  return text;
}

}  // namespace pemc::stan_target

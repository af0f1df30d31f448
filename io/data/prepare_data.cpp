// Byte-level tokenisation and the train/validation split; see prepare_data.hpp.
#include "io/data/prepare_data.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <vector>

#include "io/data/token_file.hpp"
#include "io/tokenizer/utf8.hpp"
#include "src/base/errors.hpp"

namespace zeropp {

namespace fs = std::filesystem;

std::string PrepareStats::summary() const {
  std::ostringstream os;
  os << "prepare-data: " << input_path << " (" << input_bytes << " bytes) -> " << train_path << " ("
     << train_tokens << " tokens), " << val_path << " (" << val_tokens << " tokens)";
  return os.str();
}

PrepareStats prepare_data(const std::string& input_path, const std::string& out_dir, double val_fraction) {
  if (!(val_fraction > 0.0 && val_fraction < 1.0)) {
    std::ostringstream os;
    os << "validation fraction " << val_fraction << " must lie strictly between 0 and 1";
    throw Error(os.str());
  }
  std::error_code ec;
  if (fs::is_directory(input_path, ec))
    throw Error("input " + input_path + ": is a directory, not a text file");
  std::ifstream in(input_path, std::ios::binary);
  if (!in) throw Error("input " + input_path + ": cannot open: " + std::strerror(errno));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error("input " + input_path + ": read error");
  if (text.empty()) throw Error("input " + input_path + ": is empty");
  if (const int64_t bad = first_invalid_utf8(text); bad >= 0)
    throw Error(invalid_utf8_message("input " + input_path, text, bad));
  const auto n = int64_t(text.size());
  if (n > int64_t(std::numeric_limits<int32_t>::max())) {
    throw Error("input " + input_path + ": " + std::to_string(n) +
                " bytes exceed the token file format's limit of 2^31-1 tokens");
  }
  const auto n_val = int64_t(std::floor(double(n) * val_fraction));
  const int64_t n_train = n - n_val;
  if (n_val < 2 || n_train < 2) {
    std::ostringstream os;
    os << "input " << input_path << ": too small: " << n << " tokens split at validation fraction "
       << val_fraction << " give " << n_train << " train and " << n_val
       << " validation tokens; each needs at least 2";
    throw Error(os.str());
  }

  fs::create_directories(out_dir, ec);
  if (ec) throw Error("output directory " + out_dir + ": cannot create: " + ec.message());
  if (!fs::is_directory(out_dir, ec)) throw Error("output directory " + out_dir + ": is not a directory");

  std::vector<uint16_t> tokens(text.size());
  for (size_t i = 0; i < text.size(); ++i) tokens[i] = static_cast<unsigned char>(text[i]);

  PrepareStats st;
  st.input_path = input_path;
  st.train_path = (fs::path(out_dir) / "train.bin").string();
  st.val_path = (fs::path(out_dir) / "val.bin").string();
  st.input_bytes = n;
  st.train_tokens = n_train;
  st.val_tokens = n_val;
  write_token_file(st.train_path, tokens.data(), size_t(n_train));
  write_token_file(st.val_path, tokens.data() + n_train, size_t(n_val));
  return st;
}

}  // namespace zeropp

// `zeropp help keys [--markdown]`: every deck key with its type, default, allowed
// values and meaning (the README's table is this command's Markdown).
#include "src/app/command.hpp"
#include "src/base/errors.hpp"
#include "src/base/logging.hpp"
#include "src/config/describe.hpp"

namespace zeropp {

namespace {

class KeysCommand final : public Command {
 public:
  explicit KeysCommand(CLI::App& group)
      : Command(group.add_subcommand("keys", "Every deck key: type, default, allowed values, meaning")) {
    sub_->add_flag("--markdown", markdown_, "As the README's Markdown table (scripts/readme-keys)");
  }
  int run() override {
    log0("%s", markdown_ ? keys_markdown().c_str() : keys_help().c_str());
    return kExitOk;
  }

 private:
  bool markdown_ = false;
};

}  // namespace

void add_help_command(CLI::App& app, Commands& out) {
  auto* help = app.add_subcommand("help", "Reference");
  help->require_subcommand(1);
  out.push_back(std::make_unique<KeysCommand>(*help));
}

}  // namespace zeropp

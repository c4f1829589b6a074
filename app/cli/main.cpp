// kforge-cli: the headless face of kforge's core. Same engine as the GUI, for GPU hosts and scripts.
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>

#include "app/cli/commands.h"

static const char *kUsage =
    "usage: kforge-cli <command> [options]\n\n"
    "commands:\n"
    "  search   run a kernel search headless and write a session file\n"
    "  campaign search every operator of a profiled workload, the budget spread by the time each could save\n"
    "  eval     evaluate one candidate against one operator card; prints a JSON verdict\n"
    "  show     print a session's search tree\n"
    "  card     print an operator card as JSON\n"
    "  templates list the offline generator's kernel templates, or render one\n"
    "  profile  profile a workload's model (ATen calls, cards, Chrome trace), or a CUDA node with Nsight Compute\n"
    "  import   import a folder of KernelBench-style problems as workloads\n"
    "  model    write a built-in model (decoder, diffusion, resnet50) with random weights as a workload\n"
    "  fastp    search imported problems and report fast_0, fast_1, fast_1.5 over eager and torch.compile\n"
    "  decide   accept or reject a node by hand, with the reason\n"
    "  reverify verify accepted nodes again on inputs of a new seed; revoke those shown wrong\n"
    "  export   write a session's accepted kernels as a kernel pack\n"
    "  run      run a workload with and without a kernel pack (--compare)\n"
    "  check-templates  verify every template's default point on every family and dtype\n"
    "  knowledge list the knowledge base or what a prompt for a device and operator retrieves; check user notes\n\n"
    "Run 'kforge-cli <command> --help' for a command's options. Every command that reads a session\n"
    "(show, decide, reverify, export) takes it either as its first argument or as --session FILE.\n";

// A session named either way, given to each command in the form its parser reads: show and decide
// read --session FILE, reverify and export a leading SESSION.
static kforge::cli::Args sessionAsOption(kforge::cli::Args args)
{
    if (!args.empty() && args[0].rfind("-", 0) != 0)
        args.insert(args.begin(), "--session");
    return args;
}

static kforge::cli::Args sessionFirst(kforge::cli::Args args)
{
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] != "--session")
            continue;
        if (i + 1 >= args.size() || args[i + 1].empty())
            throw std::invalid_argument("option --session needs a value");
        const std::string file = args[i + 1];
        args.erase(args.begin() + long(i), args.begin() + long(i) + 2);
        if (!args.empty() && args[0].rfind("-", 0) != 0)
            throw std::invalid_argument("the session is named twice ('" + args[0] + "' and --session '" + file + "')");
        args.insert(args.begin(), file);
        break;
    }
    return args;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
        std::fputs(kUsage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const std::string cmd = argv[1];
    kforge::cli::Args args(argv + 2, argv + argc);
    try {
        if (cmd == "search")
            return kforge::cli::searchCommand(args);
        if (cmd == "campaign")
            return kforge::cli::campaignCommand(args);
        if (cmd == "eval")
            return kforge::cli::evalCommand(args);
        if (cmd == "show")
            return kforge::cli::showCommand(sessionAsOption(args));
        if (cmd == "card")
            return kforge::cli::cardCommand(args);
        if (cmd == "templates")
            return kforge::cli::templatesCommand(args);
        if (cmd == "profile") // a workload file first; --session/--node for a node
            return !args.empty() && args[0].rfind("--", 0) != 0 ? kforge::cli::profileWorkloadCommand(args) : kforge::cli::profileCommand(args);
        if (cmd == "import")
            return kforge::cli::importCommand(args);
        if (cmd == "model")
            return kforge::cli::modelCommand(args);
        if (cmd == "fastp")
            return kforge::cli::fastpCommand(args);
        if (cmd == "decide")
            return kforge::cli::decideCommand(sessionAsOption(args));
        if (cmd == "reverify")
            return kforge::cli::reverifyCommand(sessionFirst(args));
        if (cmd == "export")
            return kforge::cli::exportCommand(sessionFirst(args));
        if (cmd == "run")
            return kforge::cli::runCommand(args);
        if (cmd == "check-templates")
            return kforge::cli::checkTemplatesCommand(args);
        if (cmd == "knowledge")
            return kforge::cli::knowledgeCommand(args);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "kforge-cli %s: %s\n", cmd.c_str(), e.what());
        return 2;
    } catch (...) {
        std::fprintf(stderr, "kforge-cli %s: failed with an unexpected error\n", cmd.c_str());
        return 2;
    }
    std::fprintf(stderr, "kforge-cli: unknown command '%s'\n\n%s", cmd.c_str(), kUsage);
    return 2;
}

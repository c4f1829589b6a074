#include "proposers/template_library.h"

namespace kforge {

const TemplateLibrary &TemplateLibrary::builtin()
{
    static const TemplateLibrary lib = [] {
        TemplateLibrary l;
        addCpuSoftmaxTemplates(l);
        addCpuRowwiseTemplates(l);
        addCudaRowTemplates(l);
        addCudaOtherTemplates(l);
        return l;
    }();
    return lib;
}

void TemplateLibrary::add(KernelTemplate t)
{
    m_templates.push_back(std::move(t));
}

std::vector<const KernelTemplate *> TemplateLibrary::forFamily(const std::string &family, const std::string &backend) const
{
    std::vector<const KernelTemplate *> out;
    for (const auto &t : m_templates)
        if (t.family == family && t.backend == backend)
            out.push_back(&t);
    return out;
}

const KernelTemplate *TemplateLibrary::find(const std::string &id) const
{
    for (const auto &t : m_templates)
        if (t.id == id)
            return &t;
    return nullptr;
}

} // namespace kforge

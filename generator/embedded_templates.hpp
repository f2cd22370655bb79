// The CUDA templates of templates/, embedded at build time (cmake/EmbedTemplates.cmake).
#pragma once

#include <string>
#include <vector>

namespace bandjit {

struct TemplateFile {
  std::string name;  ///< include name, e.g. "bandjit/band_qk.cuh"
  std::string text;
};

const std::vector<TemplateFile>& embedded_templates();

}  // namespace bandjit

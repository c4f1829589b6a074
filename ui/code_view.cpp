#include "ui/code_view.h"

#include <Qsci/qscilexercpp.h>
#include <Qsci/qsciscintilla.h>
#include <QFontDatabase>

#include "ui/theme.h"

namespace kforge::ui {

namespace {

// CUDA's own keywords and types, on top of C++'s, so kernels read as they do in an editor that knows them.
const char *kCudaWords =
    "__global__ __device__ __host__ __shared__ __constant__ __restrict__ __forceinline__ __noinline__ "
    "__launch_bounds__ __syncthreads __syncwarp __cluster_dims__ threadIdx blockIdx blockDim gridDim warpSize";

class CudaLexer : public QsciLexerCPP {
public:
    using QsciLexerCPP::QsciLexerCPP;
    const char *keywords(int set) const override
    {
        if (set == 2) // the lexer's "secondary keywords and identifiers"
            return kCudaWords;
        return QsciLexerCPP::keywords(set);
    }
};

} // namespace

QsciScintilla *makeCodeView(QWidget *parent)
{
    auto *code = new QsciScintilla(parent);
    auto *lexer = new CudaLexer(code);
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    lexer->setDefaultFont(mono);
    lexer->setFont(mono); // every style, or comments fall back to a proportional font
    code->setLexer(lexer);
    applyTheme(code); // light or dark with the palette
    lexer->setColor(theme(code->palette()).keyword2, QsciLexerCPP::KeywordSet2);
    // Scintilla evaluates #if against the file's own #defines and greys out what it thinks is dead;
    // templates pick branches with macros it misjudges, so show every branch as live code.
    code->SendScintilla(QsciScintillaBase::SCI_SETPROPERTY, "lexer.cpp.track.preprocessor", "0");
    code->setReadOnly(true);
    code->setUtf8(true);
    code->setMarginType(0, QsciScintilla::NumberMargin);
    code->setMarginWidth(0, QStringLiteral("00000"));
    code->setMarginsFont(mono);
    code->setWrapMode(QsciScintilla::WrapNone);
    code->setCaretLineVisible(false);
    code->setTabWidth(4);
    return code;
}

} // namespace kforge::ui

#include "identity/program_kind.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace s4bxi::interpose {

namespace {

constexpr const char* kMarker = "shmem_init";

// The executable's static symbol table (.symtab) names `name`: a library linked into it
// statically, whose symbols the dynamic linker does not export. A stripped executable
// has no such table.
bool executable_defines(const char* name)
{
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st{};
    void* map = fstat(fd, &st) == 0 && st.st_size > static_cast<off_t>(sizeof(Elf64_Ehdr))
                    ? mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0)
                    : MAP_FAILED;
    close(fd);
    if (map == MAP_FAILED) return false;
    const auto* base = static_cast<const unsigned char*>(map);
    const size_t size = static_cast<size_t>(st.st_size);
    bool found = false;
    const auto* header = reinterpret_cast<const Elf64_Ehdr*>(base);
    bool elf64 = std::memcmp(header->e_ident, ELFMAG, SELFMAG) == 0 && header->e_ident[EI_CLASS] == ELFCLASS64;
    if (elf64 && header->e_shoff && header->e_shentsize == sizeof(Elf64_Shdr) &&
        header->e_shoff + static_cast<size_t>(header->e_shnum) * sizeof(Elf64_Shdr) <= size) {
        const auto* sections = reinterpret_cast<const Elf64_Shdr*>(base + header->e_shoff);
        for (unsigned i = 0; i < header->e_shnum && !found; ++i) {
            const Elf64_Shdr& symtab = sections[i];
            if (symtab.sh_type != SHT_SYMTAB || symtab.sh_link >= header->e_shnum) continue;
            const Elf64_Shdr& strtab = sections[symtab.sh_link];
            if (symtab.sh_offset + symtab.sh_size > size || strtab.sh_offset + strtab.sh_size > size) continue;
            const auto* symbols = reinterpret_cast<const Elf64_Sym*>(base + symtab.sh_offset);
            const char* names = reinterpret_cast<const char*>(base + strtab.sh_offset);
            size_t length = std::strlen(name);
            for (size_t k = 0; k < symtab.sh_size / sizeof(Elf64_Sym); ++k) {
                size_t at = symbols[k].st_name;
                if (symbols[k].st_shndx != SHN_UNDEF && at + length < strtab.sh_size &&
                    std::memcmp(names + at, name, length + 1) == 0) {
                    found = true;
                    break;
                }
            }
        }
    }
    munmap(map, size);
    return found;
}

}  // namespace

bool program_is_openshmem()
{
    return dlsym(RTLD_DEFAULT, kMarker) != nullptr || executable_defines(kMarker);
}

}  // namespace s4bxi::interpose

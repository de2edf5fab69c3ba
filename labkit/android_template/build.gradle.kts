// Top-level build file: the plugin versions every module uses.
plugins {
    id("com.android.application") version "@@AGP_VERSION@@" apply false
    id("org.jetbrains.kotlin.android") version "@@KOTLIN_VERSION@@" apply false
}

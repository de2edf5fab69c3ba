import org.jetbrains.kotlin.gradle.dsl.JvmTarget

plugins {
    id("com.android.application")
    id("org.jetbrains.kotlin.android")
}

android {
    namespace = "@@PACKAGE@@"
    compileSdk = @@COMPILE_SDK@@

    defaultConfig {
        applicationId = "@@PACKAGE@@"
        minSdk = @@MIN_SDK@@
        targetSdk = @@COMPILE_SDK@@
        versionCode = 1
        versionName = "1.0"
        ndk {
            // Ship ONNX Runtime's native library only for 64-bit Arm phones and the x86_64 emulator:
            // the AAR also carries armeabi-v7a and x86 builds that would each add megabytes to the app.
            abiFilters += listOf("arm64-v8a", "x86_64")
        }
    }

    buildTypes {
        release {
            isMinifyEnabled = false
        }
    }

    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_17
        targetCompatibility = JavaVersion.VERSION_17
    }
}

kotlin {
    compilerOptions {
        jvmTarget.set(JvmTarget.JVM_17)
    }
}

dependencies {
    // The same version as the onnxruntime Python package that converted the model.
    implementation("com.microsoft.onnxruntime:onnxruntime-android:@@ORT_VERSION@@")
}
